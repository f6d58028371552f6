#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "hashing/compiler_identity.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string bytes_of_hex(const std::string& hex) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

class CompilerIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "jitcache-identity-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path dir;
};

// The build-id names the code that runs: a library replaced on disk after it was loaded (a
// package upgrade under a long-running app) keeps the identity of the image in memory.
TEST_F(CompilerIdentity, LoadedLibraryKeepsTheBuildIdOfItsMappedImageWhenTheFileIsReplaced) {
  const fs::path copy = dir / "libprobe.so";
  fs::copy_file(IDENTITY_PROBE, copy);
  void* handle = ::dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  void* symbol = ::dlsym(handle, "jitcache_identity_probe");
  ASSERT_NE(symbol, nullptr);

  const std::string path = library_containing(symbol);
  EXPECT_EQ(path, fs::canonical(copy).string());
  const std::string loaded_id = read_build_id(path);
  ASSERT_EQ(loaded_id.size(), 40u) << "the probe is linked with --build-id=sha1";

  // A new file under the same name, whose build-id differs in one byte.
  std::string bytes = read_bytes(copy);
  const std::size_t at = bytes.find(bytes_of_hex(loaded_id));
  ASSERT_NE(at, std::string::npos);
  bytes[at] = static_cast<char>(bytes[at] ^ 0xff);
  const fs::path replacement = dir / "libprobe.so.new";
  std::ofstream(replacement, std::ios::binary) << bytes;
  fs::rename(replacement, copy);
  ASSERT_NE(read_build_id(path), loaded_id);

  EXPECT_EQ(identify_library(path).build_id, loaded_id);
  ::dlclose(handle);
}

TEST_F(CompilerIdentity, AnAddressInTheProgramItselfNamesTheProgramsFile) {
  static int in_the_program = 0;
  EXPECT_EQ(library_containing(&in_the_program), fs::canonical("/proc/self/exe").string());
  EXPECT_EQ(library_containing(nullptr), "");
}

}  // namespace
}  // namespace jitcache
