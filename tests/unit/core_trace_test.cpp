// Traces are private files in a private folder, bounded by retention, removed by clear
// (issue 15.7 and 15.10).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "core/trace.hpp"
#include "store/files/file_ops.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

class TraceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("jitcache_trace_" + std::to_string(std::random_device{}()));
    fs::create_directories(root_);
    old_umask_ = ::umask(0);  // the worst case: nothing may depend on the umask
  }
  void TearDown() override {
    ::umask(old_umask_);
    fs::remove_all(root_);
  }
  static std::uint32_t mode_of(const fs::path& path) {
    struct stat info {};
    ::lstat(path.c_str(), &info);
    return info.st_mode & 07777;
  }
  static std::size_t records_in(const fs::path& dir) {
    std::size_t count = 0;
    std::error_code ec;
    for (const auto& item : fs::directory_iterator(dir, ec)) count += item.path().extension() == ".json";
    return count;
  }
  static nlohmann::json record(int i) { return {{"verdict", "miss"}, {"n", i}}; }

  fs::path root_;
  mode_t old_umask_ = 0;
};

TEST_F(TraceFiles, PrivateFolderAndFilesWhateverTheUmask) {
  const fs::path dir = root_ / "a" / "traces";
  const fs::path file = write_trace(dir, record(1), nullptr);
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mode_of(root_ / "a"), 0700u);
  EXPECT_EQ(mode_of(file), 0600u);
}

TEST_F(TraceFiles, SymlinkedOrSharedFolderIsRefused) {
  const fs::path elsewhere = root_ / "elsewhere";
  fs::create_directories(elsewhere);
  fs::permissions(elsewhere, fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory_symlink(elsewhere, root_ / "link");
  EXPECT_TRUE(write_trace(root_ / "link", record(1), nullptr).empty());
  EXPECT_EQ(records_in(elsewhere), 0u);
  EXPECT_NE(trace_dir_problem(root_ / "link").find("symlink"), std::string::npos);

  const fs::path shared = root_ / "shared";
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all, fs::perm_options::replace);  // 0777, as under umask 000
  EXPECT_TRUE(write_trace(shared, record(1), nullptr).empty());
  EXPECT_EQ(records_in(shared), 0u);
  EXPECT_NE(trace_dir_problem(shared).find("writable by other users"), std::string::npos);

  std::string error;
  EXPECT_EQ(clear_traces(shared, &error).files, 0u);
  EXPECT_FALSE(error.empty());
}

TEST_F(TraceFiles, ForeignOwnedFolderIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  const fs::path foreign = root_ / "foreign";
  fs::create_directories(foreign);
  fs::permissions(foreign, fs::perms::owner_all, fs::perm_options::replace);
  ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  EXPECT_TRUE(write_trace(foreign, record(1), nullptr).empty());
  EXPECT_EQ(records_in(foreign), 0u);
  EXPECT_NE(trace_dir_problem(foreign).find("owned by another user"), std::string::npos);
}

TEST_F(TraceFiles, RetentionByCountBytesAndAge) {
  const fs::path dir = root_ / "traces";
  std::vector<fs::path> written;
  for (int i = 0; i < 40; ++i) {
    written.push_back(write_trace(dir, record(i), nullptr));
    // Distinct, increasing times without waiting: oldest first is then well defined.
    ASSERT_FALSE(fileops::set_mtime(written.back(), fileops::now_ns() - (100 - i) * 1'000'000'000ll));
  }
  EXPECT_EQ(trace_usage(dir).files, 40u);

  EXPECT_EQ(prune_traces(dir, {25, 0, 0}).files, 15u);
  EXPECT_EQ(trace_usage(dir).files, 25u);
  EXPECT_FALSE(fs::exists(written[14]));  // the oldest went first
  EXPECT_TRUE(fs::exists(written[15]));

  const std::uint64_t one = fs::file_size(written.back());
  prune_traces(dir, {0, one * 10, 0});
  EXPECT_LE(trace_usage(dir).bytes, one * 10);
  EXPECT_TRUE(fs::exists(written.back()));

  prune_traces(dir, {0, 0, 64});  // older than 64 s: all but the last 3 (stamped 63, 62, 61 s ago)
  EXPECT_EQ(trace_usage(dir).files, 3u);
}

TEST_F(TraceFiles, ClearRemovesTracesAndInputCopiesOnly) {
  const fs::path dir = root_ / "traces";
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(write_trace(dir, record(i), nullptr).empty());
  fs::create_directories(dir / "inputs");
  std::ofstream(dir / "inputs" / "0123") << "source";
  std::ofstream(dir / "notes.txt") << "not ours";
  std::string error;
  const TraceUsage removed = clear_traces(dir, &error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(removed.files, 3u);
  EXPECT_EQ(trace_usage(dir).files, 0u);
  EXPECT_FALSE(fs::exists(dir / "inputs" / "0123"));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
}

}  // namespace
}  // namespace jitcache
