// Single-flight with real apps on the real PoCL driver: many processes cold on one cache, and
// many threads of one process building the same program. Compiles are counted from the traces:
// a "miss" verdict is a real build.
#include <gtest/gtest.h>

#include <future>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> cache_env(const fs::path& cache, const fs::path& traces) {
  return {{"LD_PRELOAD", JITCACHE_LIBRARY},     {"JITCACHE_DIR", cache.string()},
          {"JITCACHE_TRACE", "1"},              {"JITCACHE_TRACE_DIR", traces.string()},
          {"JITCACHE_WAIT_MS", "300000"},       {"POCL_KERNEL_CACHE", "0"}};
}

int counter(const fs::path& cache, const char* name) {
  return nlohmann::json::parse(read_text(cache / "stats.json")).value(name, 0);
}

RunResult run_plain(const std::vector<std::string>& argv) {
  RunOptions options;
  options.env = {{"POCL_KERNEL_CACHE", "0"}};
  options.unset = {"LD_PRELOAD"};
  return run(argv, options);
}

TEST(OpenClSingleFlight, SixteenColdProcessesCompileEachProgramExactlyOnce) {
  TempDir tmp;
  const RunResult plain = run_plain({OPENCL_EXAMPLE});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;

  constexpr int kProcesses = 16;
  RunOptions options;
  options.env = cache_env(tmp / "cache", tmp / "traces");
  // Captured in the app: the build lock is then held until the entry is stored, so every process
  // that comes after a build finds it. Under `auto` a process that starts after the first handed
  // its key to a capture helper, which has not started it yet, builds it again at once (by design:
  // "built here: its capture helper had not started it", docs/settings.md), so "exactly one build
  // per key" would depend on how quick the helper is (CaptureHelper tests that race).
  options.env["JITCACHE_CAPTURE"] = "build";
  std::vector<std::future<RunResult>> running;
  // Each process gets its own PoCL scratch dir from run(): PoCL 3.1 processes that load the same
  // binary at once under one POCL_CACHE_DIR remove each other's work folder (docs/concurrency.md).
  for (int i = 0; i < kProcesses; ++i) {
    running.push_back(std::async(std::launch::async, [options] { return run({OPENCL_EXAMPLE}, options); }));
  }
  for (auto& process : running) {
    RunResult result = process.get();
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, plain.out);  // every process computed the right results
  }

  const std::vector<nlohmann::json> traces = read_traces(tmp / "traces");
  EXPECT_EQ(traces.size(), 2u * kProcesses);
  std::map<std::string, int> misses_per_key;
  int hits = 0, waited = 0;
  for (const auto& trace : traces) {
    const std::string verdict = trace["verdict"];
    if (verdict == "miss") ++misses_per_key[trace["key"]];
    if (verdict == "hit") ++hits;
    if (trace["timings_us"].value("wait", 0) > 1000) ++waited;  // over 1 ms: waited for a builder
  }
  // Two programs: exactly one real build of each across all sixteen processes.
  EXPECT_EQ(misses_per_key.size(), 2u);
  for (const auto& [key, misses] : misses_per_key) EXPECT_EQ(misses, 1) << key;
  EXPECT_EQ(hits, 2 * kProcesses - 2);
  std::printf("[ counts   ] %d processes: %zu compiles, %d hits, %d lookups waited for a builder\n", kProcesses,
              misses_per_key.size(), hits, waited);
}

// `capture` is the setting: with "release" the waiting threads make the leader store at once.
void expect_threads_share_one_compile(const std::string& capture) {
  TempDir tmp;
  constexpr int kThreads = 8;
  const std::vector<std::string> app = {OPENCL_THREADS, "--threads", std::to_string(kThreads)};
  const RunResult plain = run_plain(app);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;

  auto run_cached = [&](const std::string& name, std::map<std::string, int>* tiers) {
    RunOptions options;
    options.env = cache_env(tmp / "cache", tmp / name);
    // PoCL's kernel cache stays on here: with it off, PoCL 3.1 unpacks every program loaded from
    // one binary into the same scratch folder and deletes it at the first release, under the
    // other threads' feet (docs/concurrency.md). run() gives the process a fresh POCL_CACHE_DIR.
    options.env.erase("POCL_KERNEL_CACHE");
    options.env["JITCACHE_CAPTURE"] = capture;
    RunResult result = run(app, options);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, plain.out);
    std::vector<nlohmann::json> traces = read_traces(tmp / name);
    for (const auto& trace : traces) ++(*tiers)[trace["verdict"].get<std::string>() + "/" + trace["tier"].get<std::string>()];
    return traces.size();
  };

  // Cold: one thread compiles, the others wait and share its program; the later build in the
  // same context is a memory-tier lookup.
  std::map<std::string, int> cold;
  EXPECT_EQ(run_cached("cold", &cold), static_cast<std::size_t>(kThreads + 1));
  EXPECT_EQ(cold["miss/"], 1);
  EXPECT_EQ(cold["hit/memory"], kThreads);
  EXPECT_EQ(counter(tmp / "cache", "hits_memory"), kThreads);
  EXPECT_EQ(counter(tmp / "cache", "misses"), 1);

  // Warm: one thread loads the binary from disk, every other build is served from memory.
  std::map<std::string, int> warm;
  EXPECT_EQ(run_cached("warm", &warm), static_cast<std::size_t>(kThreads + 1));
  EXPECT_EQ(warm["hit/disk"], 1);
  EXPECT_EQ(warm["hit/memory"], kThreads);
  EXPECT_EQ(warm["miss/"], 0);
}

TEST(OpenClSingleFlight, ThreadsBuildingTheSameProgramShareOneCompileAndTheMemoryTier) {
  expect_threads_share_one_compile("build");
}

TEST(OpenClSingleFlight, ThreadsShareOneCompileWithCaptureAtReleaseToo) { expect_threads_share_one_compile("release"); }

}  // namespace
}  // namespace jitcache::testing
