// Real apps on real PoCL under the shim in hostile conditions, and the misuse table. In every
// case the app's output must equal the run without the shim, and the shim may say at most one
// warning line.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

size_t warning_lines(const std::string& err) {
  size_t count = 0;
  for (size_t at = 0; (at = err.find("jitcache: warning", at)) != std::string::npos; ++at) ++count;
  return count;
}

// A small tmpfs mounted for the test's lifetime. Needs root (CI runs as root); mounted() tells.
class SmallTmpfs {
 public:
  SmallTmpfs(const fs::path& where, const std::string& options) : where_(where) {
    fs::create_directories(where_);
    mounted_ = ::geteuid() == 0 && ::mount("tmpfs", where_.c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(where_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  bool remount_read_only() {
    return ::mount("tmpfs", where_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  fs::path where_;
  bool mounted_ = false;
};

class OpenClReliability : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  int runs = 0;

  struct Run {
    RunResult result;
    std::map<std::string, int> verdicts;
  };

  Run run_cached(std::vector<std::string> argv, const fs::path& root, RunOptions options = {}) {
    const fs::path traces = tmp / ("traces-" + std::to_string(++runs));
    options.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    options.env["JITCACHE_DIR"] = root.string();
    options.env["JITCACHE_TRACE"] = "1";
    options.env["JITCACHE_TRACE_DIR"] = traces.string();
    options.env["POCL_KERNEL_CACHE"] = "0";
    Run done;
    done.result = run(argv, options);
    done.verdicts = count_verdicts(read_traces(traces));
    return done;
  }

  // The app behaved as without the shim and the shim said at most one line.
  static void expect_unaffected(const RunResult& cached, const RunResult& plain) {
    EXPECT_EQ(cached.exit_code, 0) << cached.err;
    EXPECT_EQ(cached.out, plain.out);
    EXPECT_LE(warning_lines(cached.err), 1u) << cached.err;
  }
};

TEST_F(OpenClReliability, MisuseTableGivesTheDriversCodesColdAndWarm) {
  RunResult plain = run_plain({OPENCL_MISUSE});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_NE(plain.out.find("done"), std::string::npos);
  Run cold = run_cached({OPENCL_MISUSE}, cache);
  EXPECT_EQ(cold.result.exit_code, 0) << cold.result.err;
  EXPECT_EQ(cold.result.out, plain.out);
  // Warm: the valid builds are served from shadows, the misuse then lands on those.
  Run warm = run_cached({OPENCL_MISUSE}, cache);
  EXPECT_EQ(warm.result.exit_code, 0) << warm.result.err;
  EXPECT_EQ(warm.result.out, plain.out);
  EXPECT_GE(warm.verdicts["hit"], 2) << warm.result.err;
}

TEST_F(OpenClReliability, FullDiskLeavesTheAppCorrect) {
  SmallTmpfs disk(tmp / "small", "size=32k,mode=0700");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a small tmpfs needs root with CAP_SYS_ADMIN";
  const std::vector<std::string> app = {OPENCL_TWO_BUILDS};
  RunResult plain = run_plain(app);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const fs::path root = tmp / "small" / "cache";
  // The app's own store hits the full disk (with the default on PoCL a capture helper would, and
  // the app would only say so at JITCACHE_LOG=info).
  RunOptions store_in_the_app;
  store_in_the_app.env["JITCACHE_CAPTURE"] = "build";
  Run first = run_cached(app, root, store_in_the_app);
  expect_unaffected(first.result, plain);
  EXPECT_NE(first.result.err.find("No space left"), std::string::npos) << first.result.err;
  Run second = run_cached(app, root);  // nothing half-written may be served (helpers included)
  expect_unaffected(second.result, plain);
  EXPECT_EQ(second.verdicts["hit"], 0);
  EXPECT_TRUE(entry_files(root).empty());
}

// PoCL frees a program the app released with its last kernel and hands the same handle to the next
// program, here one made from another program's binary. The freed program's record must not key
// (and serve) the new one: before the fix its build was a hit on the freed source ("scale" served
// for "square": clCreateKernel failed with -46) and the rounds after it were never looked up.
TEST_F(OpenClReliability, AProgramFreedWithItsLastKernelLeavesNoRecordForItsHandle) {
  const std::vector<std::string> app = {OPENCL_REUSED_HANDLE, "8"};
  RunResult plain = run_plain(app);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  if (plain.err.find("reused handles: 0") != std::string::npos) GTEST_SKIP() << "the driver reused no handle";
  // Which handle the driver hands out next depends on the heap's layout: the size of the
  // environment moves it (without the fix, 2 of these 6 sizes failed on PoCL 3.1).
  for (std::size_t pad : {0, 100, 1000, 3000, 5000, 9000}) {
    RunOptions options;
    options.env["HEAP_LAYOUT_PAD"] = std::string(pad, 'x');
    Run cold = run_cached(app, tmp / ("cache-" + std::to_string(pad)), options);
    expect_unaffected(cold.result, plain);
    // One lookup per source build: the "square" program whose binary the rounds use, then 8 x "scale".
    EXPECT_EQ(cold.verdicts["miss"] + cold.verdicts["hit"], 9) << "pad " << pad << ": " << cold.result.err;
  }
}

TEST_F(OpenClReliability, ReadOnlyFileSystemServesHitsQuietly) {
  SmallTmpfs disk(tmp / "ro", "size=8m,mode=0700");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root with CAP_SYS_ADMIN";
  const std::vector<std::string> app = {OPENCL_TWO_BUILDS};
  RunResult plain = run_plain(app);
  const fs::path root = tmp / "ro" / "cache";
  expect_unaffected(run_cached(app, root).result, plain);
  ASSERT_EQ(entry_files(root).size(), 2u);
  ASSERT_TRUE(disk.remount_read_only());
  Run warm = run_cached(app, root);
  expect_unaffected(warm.result, plain);
  EXPECT_EQ(warm.verdicts["hit"], 2);
}

TEST_F(OpenClReliability, SymlinkRootIsRefusedWithOneWarning) {
  const std::vector<std::string> app = {OPENCL_TWO_BUILDS};
  RunResult plain = run_plain(app);
  fs::create_directories(tmp / "target");
  ::chmod((tmp / "target").c_str(), 0700);
  fs::create_directory_symlink(tmp / "target", cache);
  Run result = run_cached(app, cache);
  expect_unaffected(result.result, plain);
  EXPECT_NE(result.result.err.find("symbolic link"), std::string::npos) << result.result.err;
  EXPECT_TRUE(fs::is_empty(tmp / "target"));
}

TEST_F(OpenClReliability, RootOwnedByAnotherUserIsRefusedWithOneWarning) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving the cache root to another user needs root";
  const std::vector<std::string> app = {OPENCL_TWO_BUILDS};
  RunResult plain = run_plain(app);
  fs::create_directories(cache);
  ::chmod(cache.c_str(), 0700);
  ASSERT_EQ(::chown(cache.c_str(), 65534, 65534), 0);
  Run result = run_cached(app, cache);
  expect_unaffected(result.result, plain);
  EXPECT_NE(result.result.err.find("owned by uid 65534"), std::string::npos) << result.result.err;
  EXPECT_TRUE(fs::is_empty(cache));
}

// Issue 15.3: each program's entry (binary + sidecar) copied under the other's key. Served, the
// app would get the other program's binary; the sidecar names its own key, so both are refused.
TEST_F(OpenClReliability, EntriesSwappedBetweenKeysAreNotServed) {
  const std::vector<std::string> app = {OPENCL_TWO_BUILDS};
  RunResult plain = run_plain(app);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  expect_unaffected(run_cached(app, cache).result, plain);
  const std::vector<fs::path> files = entry_files(cache);
  ASSERT_EQ(files.size(), 2u);
  const std::string first = read_text(files[0]);
  write_text(files[0], read_text(files[1]));
  write_text(files[1], first);
  Run warm = run_cached(app, cache);
  expect_unaffected(warm.result, plain);
  EXPECT_EQ(warm.verdicts["hit"], 0) << warm.result.err;
  Run again = run_cached(app, cache);  // rebuilt and stored under the right keys
  expect_unaffected(again.result, plain);
  EXPECT_EQ(again.verdicts["hit"], 2) << again.result.err;
}

TEST_F(OpenClReliability, RootRemovedMidRunLeavesTheAppCorrect) {
  RunResult plain = run_plain({OPENCL_TWO_BUILDS, "--remove-between", (tmp / "unused").string()});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  fs::create_directories(cache);
  Run result = run_cached({OPENCL_TWO_BUILDS, "--remove-between", cache.string()}, cache);
  expect_unaffected(result.result, plain);
  // A vanished root stays gone: it may have been an unmounted disk.
  EXPECT_FALSE(fs::exists(cache));
}

}  // namespace
}  // namespace jitcache::testing
