// Issue 14.7: every wait of the shim is bounded by a documented setting and, when it lasts over a
// second, announced once on stderr (core/long_wait.hpp). A "stuck holder" here is the test
// itself holding the lock file with the store's own FileLock; the app is the OpenCL example on
// real PoCL and its output must still equal the run without the shim.
#include <gtest/gtest.h>

#include "store/files/file_ops.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

size_t occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++count;
  return count;
}

class LongWait : public ::testing::Test {
 protected:
  TempDir tmp;
  int runs = 0;

  // wait_for_helpers off when the test holds a build lock itself (test_support's wait would not end).
  CachedRun run_cached(const fs::path& root, std::map<std::string, std::string> env = {},
                       bool wait_for_helpers = true) {
    const fs::path traces = tmp / ("traces-" + std::to_string(++runs));
    RunOptions options;
    options.env = {{"LD_PRELOAD", JITCACHE_LIBRARY},
                   {"JITCACHE_DIR", root.string()},
                   {"JITCACHE_TRACE", "1"},
                   {"JITCACHE_TRACE_DIR", traces.string()},
                   {"POCL_KERNEL_CACHE", "0"}};
    for (auto& [name, value] : env) options.env[name] = value;
    options.timeout_s = 120;  // a hang guard only
    options.wait_for_capture_helpers = wait_for_helpers;
    return run_traced({OPENCL_EXAMPLE}, options, traces);
  }

  std::string plain_output() {
    RunResult plain = run_plain({OPENCL_EXAMPLE});
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    return plain.out;
  }
};

TEST_F(LongWait, StuckStatsLockHolderCostsAtMostFlushTimeoutAndIsAnnounced) {
  const std::string plain = plain_output();
  const fs::path root = tmp / "cache";
  ASSERT_EQ(run_cached(root).result.exit_code, 0);  // cold: creates the root and the entries
  fileops::FileLock stuck;
  ASSERT_FALSE(fileops::FileLock::acquire(root / "stats.lock", std::chrono::milliseconds(0), &stuck));
  CachedRun warm = run_cached(root, {{"JITCACHE_FLUSH_TIMEOUT_MS", "1500"}});
  EXPECT_EQ(warm.result.exit_code, 0) << warm.result.err;
  EXPECT_EQ(warm.result.out, plain);
  EXPECT_EQ(warm.verdicts["hit"], 2);
  // The exit's stats flush waits for the lock out of flush_timeout, and says so once.
  EXPECT_EQ(occurrences(warm.result.err, "stats.lock (bounded by JITCACHE_FLUSH_TIMEOUT_MS)"), 1u)
      << warm.result.err;
  EXPECT_EQ(occurrences(warm.result.err, "jitcache: waiting up to"), 1u) << warm.result.err;
}

TEST_F(LongWait, WaitForAnotherProcessBuildingTheKeyIsAnnouncedThenGivenUp) {
  const std::string plain = plain_output();
  CachedRun learn = run_cached(tmp / "learn");  // another cache: only to learn the keys
  ASSERT_EQ(learn.result.exit_code, 0) << learn.result.err;
  ASSERT_FALSE(learn.traces.empty());
  const std::string key = learn.traces.front()["key"].get<std::string>();

  // A process that took the key's build lock and stopped: the test holds the lock.
  const fs::path root = tmp / "cache";
  fs::create_directories(root / "locks");
  fs::permissions(root, fs::perms::owner_all, fs::perm_options::replace);
  fs::permissions(root / "locks", fs::perms::owner_all, fs::perm_options::replace);
  fileops::FileLock stopped_builder;
  ASSERT_FALSE(fileops::FileLock::acquire(root / "locks" / (key + ".lock"), std::chrono::milliseconds(0),
                                          &stopped_builder));
  CachedRun cold = run_cached(root, {{"JITCACHE_WAIT_MS", "1500"}}, /*wait_for_helpers=*/false);
  EXPECT_EQ(cold.result.exit_code, 0) << cold.result.err;
  EXPECT_EQ(cold.result.out, plain);
  EXPECT_EQ(occurrences(cold.result.err, "another thread or process building the same program (bounded by "
                                         "JITCACHE_WAIT_MS)"),
            1u)
      << cold.result.err;
  EXPECT_NE(cold.result.err.find("gave up waiting for another process building " + key), std::string::npos)
      << cold.result.err;
}

}  // namespace
}  // namespace jitcache::testing
