// A header edited while a build runs: changed_input() must see it, deterministically (no sleeps:
// the edits set file times explicitly or change contents behind an old mtime).
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "hashing/include_scan.hpp"
#include "hashing/input_recheck.hpp"
#include "store/files/file_ops.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

class InputRecheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jitcache_recheck_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "a.h") << "#define A 1\n";
    // Written "an hour ago": only a change after hashing makes it too new.
    ASSERT_FALSE(fileops::set_mtime(dir_ / "a.h", fileops::now_ns() - 3'600'000'000'000));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<HeaderDependency> hash_now() { return scan_includes("#include \"a.h\"\n", {}, dir_); }

  fs::path dir_;
};

TEST_F(InputRecheck, UnchangedHeaderPasses) {
  // ctime is "now" after set_mtime: hash as if the build started a moment later.
  const std::int64_t started = fileops::now_ns() + 2 * kFileClockSlackNs;
  EXPECT_EQ(changed_input(hash_now(), started), "");
}

TEST_F(InputRecheck, HeaderModifiedAfterHashingIsTooNew) {
  const std::int64_t started = fileops::now_ns() + 2 * kFileClockSlackNs;
  const auto headers = hash_now();
  ASSERT_FALSE(fileops::set_mtime(dir_ / "a.h", started + 1'000'000'000));  // an editor save "later"
  EXPECT_NE(changed_input(headers, started).find("too new"), std::string::npos);
}

TEST_F(InputRecheck, ContentsChangedBehindAnOldTimeAreSeen) {
  const auto headers = hash_now();
  std::ofstream(dir_ / "a.h", std::ios::trunc) << "#define A 2\n";
  ASSERT_FALSE(fileops::set_mtime(dir_ / "a.h", fileops::now_ns() - 3'600'000'000'000));
  const std::int64_t started = fileops::now_ns() + 2 * kFileClockSlackNs;  // times alone would pass
  EXPECT_NE(changed_input(headers, started).find("other contents"), std::string::npos);
}

TEST_F(InputRecheck, RemovedHeaderIsSeen) {
  const auto headers = hash_now();
  fs::remove(dir_ / "a.h");
  EXPECT_NE(changed_input(headers, fileops::now_ns()).find("gone"), std::string::npos);
}

TEST_F(InputRecheck, InMemoryHeadersAreNotFiles) {
  std::vector<HeaderDependency> headers = {{"mem.h", "(clCompileProgram input_headers)", true, xxh3_128("x")}};
  EXPECT_EQ(changed_input(headers, fileops::now_ns()), "");
}

}  // namespace
}  // namespace jitcache
