// What jitcache keeps follows what the app holds (shim/opencl/app_holds.hpp), on real PoCL through
// the real ocl-icd loader:
// - every build the app makes is looked up, also when it lets a kernel go while the driver still
//   holds it for a queued command, and a binary program at a freed source program's handle is
//   never served that program's binary (issue 37);
// - a context the app let go is freed: nothing jitcache keeps (the memory tier's shadow programs)
//   holds it, cold or warm, capture in the app or by a helper (issue 40);
// - jitcache reads kernel names without CL_PROGRAM_KERNEL_NAMES (NVIDIA corrupts its heap on it
//   for long names), seen by an OpenCL layer below jitcache that logs the driver calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

class AppHolds : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path pocl_dir = tmp / "pocl";
  int runs = 0;

  RunOptions options(std::map<std::string, std::string> extra = {}) {
    RunOptions o;
    o.env = {{"POCL_KERNEL_CACHE", "1"}, {"POCL_CACHE_DIR", pocl_dir.string()}};
    o.unset = {"LD_PRELOAD", "OPENCL_LAYERS", "JITCACHE_DISABLE"};
    for (auto& [name, value] : extra) o.env[name] = value;
    return o;
  }

  CachedRun run_cached(const std::vector<std::string>& argv, std::map<std::string, std::string> extra = {}) {
    fs::path trace_dir = tmp / ("traces-" + std::to_string(++runs));
    RunOptions o = options(std::move(extra));
    o.env["JITCACHE_DIR"] = cache.string();
    o.env["JITCACHE_TRACE"] = "1";
    o.env["JITCACHE_TRACE_DIR"] = trace_dir.string();
    o.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    return run_traced(argv, o, trace_dir);
  }
};

int source_builds(const std::string& err) {
  const std::string marker = "source builds ";
  const std::size_t at = err.find(marker);
  return at == std::string::npos ? -1 : std::stoi(err.substr(at + marker.size()));
}

// Issue 37: 30 programs, each kernel and program released right after its enqueue (PoCL still
// holds the kernel for the queued command), with and without a clFinish after each, with programs
// from a binary made between them. Every source build is looked up, cold and warm; warm all hit.
TEST_F(AppHolds, EveryBuildIsLookedUpWhenTheAppReleasesBeforeTheQueueRan) {
  const std::vector<std::vector<std::string>> variants = {
      {OPENCL_RELEASE_EARLY, "30"},
      {OPENCL_RELEASE_EARLY, "30", "--finish-each"},
      {OPENCL_RELEASE_EARLY, "30", "--binary-between"},
  };
  for (const auto& app : variants) {
    SCOPED_TRACE(app.back());
    fs::remove_all(cache);
    RunResult plain = run(app, options());
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const int builds = source_builds(plain.err);
    ASSERT_GE(builds, 30) << plain.err;
    for (const char* round : {"cold", "warm"}) {
      SCOPED_TRACE(round);
      CachedRun cached = run_cached(app);
      ASSERT_EQ(cached.result.exit_code, 0) << cached.result.err;
      EXPECT_EQ(cached.result.out, plain.out);
      EXPECT_EQ(static_cast<int>(cached.traces.size()), builds)
          << cached.verdicts["hit"] << " hits, " << cached.verdicts["miss"] << " misses";
      if (std::string(round) == "warm") {
        EXPECT_EQ(cached.verdicts["hit"], builds);
      }
    }
  }
}

// Issue 40: 100 rounds of make a context, build, run, let everything go. The driver frees every
// context the app let go (its destructor callback ran), as in the plain run: no program of
// jitcache's holds one, cold or warm, with the binary captured in the app and by a helper. Peak RSS
// stays within 10 % of the plain run's.
TEST_F(AppHolds, AContextTheAppReleasedIsHeldByNothingOfJitcaches) {
  const std::vector<std::string> app = {OPENCL_CONTEXT_CHURN, "100"};
  RunResult plain = run(app, options());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_NE(plain.out.find("freed after the app let them go: 100 of 100"), std::string::npos) << plain.out;
  auto peak_rss_kb = [](const std::string& err) {
    const std::size_t at = err.find("peak_rss_kb ");
    return at == std::string::npos ? 0.0 : std::stod(err.substr(at + 12));
  };
  const double plain_rss = peak_rss_kb(plain.err);
  ASSERT_GT(plain_rss, 0);
  for (const char* capture : {"build", "auto"}) {
    fs::remove_all(cache);
    for (const char* round : {"cold", "warm"}) {
      SCOPED_TRACE(std::string("capture ") + capture + ", " + round);
      CachedRun cached = run_cached(app, {{"JITCACHE_CAPTURE", capture}});
      ASSERT_EQ(cached.result.exit_code, 0) << cached.result.err;
      EXPECT_EQ(cached.result.out, plain.out);
      EXPECT_EQ(static_cast<int>(cached.traces.size()), 100);
      if (std::string(round) == "warm") {
        EXPECT_EQ(cached.verdicts["hit"], 100);
      }
      EXPECT_LE(peak_rss_kb(cached.result.err), plain_rss * 1.10) << "plain " << plain_rss << " kB";
    }
  }
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The layer that logs driver calls sits below jitcache: it sees jitcache's own reads of the
// binaries (capture = build), and never CL_PROGRAM_KERNEL_NAMES (0x1168), which the app does not
// ask. PoCL with a 252-byte name (cached) and rusticl with a 300-byte one (cached: PoCL cannot
// read such a binary back, its quirk), cold and warm.
TEST_F(AppHolds, KernelNamesAreReadWithoutAskingForTheProgramsKernelNames) {
  struct Case {
    std::string driver;
    std::string name_length;
    std::map<std::string, std::string> env;
  };
  const std::vector<Case> cases = {
      {"PoCL", "252", {}},
      {"rusticl", "300",
       {{"OCL_ICD_VENDORS", std::string(JITCACHE_TEST_VENDORS) + "/rusticl"}, {"RUSTICL_ENABLE", "llvmpipe"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.driver);
    fs::remove_all(cache);
    const std::vector<std::string> app = {OPENCL_LONG_KERNEL_NAME, c.name_length};
    RunResult plain = run(app, options(c.env));
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    for (const char* round : {"cold", "warm"}) {
      SCOPED_TRACE(round);
      const fs::path log = tmp / ("calls-" + std::to_string(runs));
      auto env = c.env;
      env["JITCACHE_CAPTURE"] = "build";
      // ocl-icd puts the layer listed last nearest the app: the log's layer goes below jitcache.
      env["OPENCL_LAYERS"] = std::string(CALL_LOG_LAYER) + ":" + JITCACHE_LIBRARY;
      env["JITCACHE_TEST_CALL_LOG"] = log.string();
      CachedRun cached = run_cached(app, env);
      ASSERT_EQ(cached.result.exit_code, 0) << cached.result.err;
      EXPECT_EQ(cached.result.out, plain.out);
      ASSERT_EQ(cached.traces.size(), 1u);
      EXPECT_EQ(cached.traces[0].value("verdict", ""), std::string(round) == "cold" ? "miss" : "hit");
      const std::vector<std::string> calls = lines_of(log);
      if (std::string(round) == "cold") {
        // CL_PROGRAM_BINARIES (0x1166): jitcache's read, so the layer is below jitcache.
        EXPECT_NE(std::find(calls.begin(), calls.end(), "program-info 0x1166"), calls.end());
      }
      EXPECT_EQ(std::find(calls.begin(), calls.end(), "program-info 0x1168"), calls.end());
    }
  }
}

}  // namespace
}  // namespace jitcache::testing
