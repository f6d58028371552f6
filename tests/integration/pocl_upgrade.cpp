#include "pocl_upgrade.hpp"

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kPoclLibrary = "/usr/lib/x86_64-linux-gnu/libpocl.so.2";
const fs::path kPoclDevices = "/usr/lib/x86_64-linux-gnu/pocl";
const fs::path kPoclShare = "/usr/share/pocl";

}  // namespace

bool pocl_layout_present() {
  return fs::exists(kPoclLibrary) && fs::exists(kPoclDevices) && fs::exists(kPoclShare);
}

std::map<std::string, std::string> upgraded_pocl(const fs::path& dir) {
  const fs::path prefix = dir / "upgraded";
  const fs::path lib = prefix / "lib" / "x86_64-linux-gnu";
  if (!fs::exists(lib / "libpocl.so.2")) {
    fs::create_directories(lib);
    fs::create_directories(prefix / "share");
    fs::copy_file(fs::canonical(kPoclLibrary), lib / "libpocl.so.2");
    fs::create_directory_symlink(kPoclDevices, lib / "pocl");           // PoCL finds its devices here
    fs::create_directory_symlink(kPoclShare, prefix / "share" / "pocl");  // and its headers here
    fs::create_directories(dir / "vendors");
    write_text(dir / "vendors" / "pocl.icd", (lib / "libpocl.so.2").string() + "\n");
  }
  return {{"OCL_ICD_VENDORS", (dir / "vendors").string()}};
}

}  // namespace jitcache::testing
