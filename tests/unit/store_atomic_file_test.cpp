// fileops::AtomicFile, the one writer of whole files: a reader sees the old file or the new one,
// and nothing of a write that was not committed stays behind, relative to a folder or by path.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/files/atomic_file.hpp"

namespace jitcache::fileops {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "atomic-file-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
  static std::string read(const fs::path& path) {
    std::ostringstream text;
    text << std::ifstream(path, std::ios::binary).rdbuf();
    return text.str();
  }
  std::size_t files() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(root), fs::directory_iterator()));
  }
  fs::path root;
};

TEST_F(AtomicFileTest, ACommitReplacesTheTargetWholeRelativeToAFolder) {
  std::ofstream(root / "target") << "old";
  Dir dir;
  ASSERT_FALSE(Dir::open(root, &dir));
  {
    AtomicFile file(dir);
    ASSERT_FALSE(file.write("target.tmp", "new bytes"));
    EXPECT_EQ(read(root / "target"), "old") << "not before the commit";
    ASSERT_FALSE(file.commit("target"));
  }
  EXPECT_EQ(read(root / "target"), "new bytes");
  EXPECT_EQ(files(), 1u) << "no temporary left";
}

TEST_F(AtomicFileTest, AWriteNotCommittedLeavesNothingBehind) {
  std::ofstream(root / "target") << "old";
  {
    AtomicFile file;  // by path
    ASSERT_FALSE(file.create(root / "target.tmp"));
    ASSERT_FALSE(file.file().write_all("half"));
  }
  EXPECT_EQ(read(root / "target"), "old");
  EXPECT_EQ(files(), 1u);
}

TEST_F(AtomicFileTest, AFailedCommitRemovesItsTemporaryAndKeepsTheTarget) {
  fs::create_directories(root / "target" / "inside");  // a folder with contents: no rename over it
  AtomicFile file;
  ASSERT_FALSE(file.write(root / "target.tmp", "new"));
  EXPECT_TRUE(file.commit(root / "target"));
  EXPECT_FALSE(fs::exists(root / "target.tmp"));
  EXPECT_TRUE(fs::is_directory(root / "target" / "inside"));
}

TEST_F(AtomicFileTest, AnExistingTemporaryIsNeverWrittenThrough) {
  std::ofstream(root / "target.tmp") << "someone else's";
  AtomicFile file;
  EXPECT_EQ(file.write(root / "target.tmp", "mine"), std::errc::file_exists);
  EXPECT_EQ(read(root / "target.tmp"), "someone else's") << "neither written nor removed";
}

}  // namespace
}  // namespace jitcache::fileops
