// The capture helper's CPU account (core/cpu_account.hpp; docs/trace-format.md, "helper_cpu"): each
// key its helper captured has its CPU by step in the trace, the stats add the steps up, and the
// sum is never more than what the OS charged the helper and its worker (counted as the helper
// ends: getrusage of itself and of its reaped workers), nor much less: the steps partition the
// processes' CPU clocks, and only the worker's last moments after its last trace go unaccounted.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

nlohmann::json stats_of(const fs::path& cache) {
  RunOptions options;
  options.env = {{"JITCACHE_DIR", cache.string()}};
  options.unset = {"LD_PRELOAD"};
  return nlohmann::json::parse(run({JITCACHE_TOOL, "stats", "--json"}, options).out, nullptr, false);
}

TEST(CaptureHelperCpuAccount, EachCapturedKeysTraceAndTheStatsAccountForTheHelpersCpuByStep) {
  TempDir tmp;
  const fs::path cache = tmp / "cache", kernels = tmp / "kernels", traces = tmp / "traces";
  copy_sources(EXAMPLE_KERNELS, kernels);
  RunOptions options;
  options.env = {{"JITCACHE_DIR", cache.string()},     {"JITCACHE_CAPTURE", "helper"},
                 {"POCL_KERNEL_CACHE", "0"},           {"POCL_CACHE_DIR", (tmp / "pocl").string()},
                 {"LD_PRELOAD", JITCACHE_LIBRARY},     {"JITCACHE_TRACE", "1"},
                 {"JITCACHE_TRACE_DIR", traces.string()}};
  // run() returns once every capture marker is let go: each key's trace is written by then.
  CachedRun cold = run_traced({OPENCL_EXAMPLE, "--kernels", kernels.string()}, options, traces);
  ASSERT_EQ(cold.result.exit_code, 0) << cold.result.err;
  ASSERT_EQ(cold.helper_traces.size(), 2u);

  std::map<std::string, double> traced;  // step -> seconds, over both keys
  for (const nlohmann::json& trace : cold.helper_traces) {
    ASSERT_EQ(trace["verdict"], "captured") << trace.dump();
    ASSERT_TRUE(trace.contains("helper_cpu") && trace["helper_cpu"].is_object()) << trace.dump();
    const nlohmann::json& cpu = trace["helper_cpu"];
    // The worker's own steps of every key (driver_load and the starts come with the first only).
    for (const char* step : {"job", "build", "answers", "read_binary", "load_back", "store", "helper"}) {
      EXPECT_TRUE(cpu.contains(step)) << step << " missing: " << cpu.dump();
    }
    EXPECT_GT(cpu.value("build", 0.0), 0.0) << "the driver's build used no CPU? " << cpu.dump();
    for (const auto& [step, seconds] : cpu.items()) {
      EXPECT_GE(seconds.get<double>(), 0.0) << step;
      traced[step] += seconds.get<double>();
    }
  }
  EXPECT_GT(traced["driver_load"], 0.0);
  EXPECT_GT(traced["worker_start"] + traced["helper_startup"], 0.0);

  // The helper ends once its app has gone and its jobs are done; it then counts what the OS
  // charged it, holding its ending marker until then: run() waited for that too.
  ASSERT_GT(stats_counter(JITCACHE_TOOL, cache, "helper_cpu_os_us"), 0);
  const nlohmann::json stats = stats_of(cache);
  ASSERT_FALSE(stats.is_discarded());
  const double os = stats["helper_cpu_os_s"].get<double>(), total = stats["helper_cpu_total_s"].get<double>();
  double traced_total = 0;
  for (const auto& [step, seconds] : traced) traced_total += seconds;
  // The worker counts in the stats what its traces show; the helper its own CPU, to its end.
  for (const char* step : {"worker_start", "driver_load", "job", "build", "answers", "read_binary", "load_back", "store"}) {
    EXPECT_NEAR(stats["helper_cpu"].value(step, -1.0), traced[step], 1e-5) << step;
  }
  EXPECT_GE(stats["helper_cpu"].value("helper", 0.0) + 1e-5, traced["helper"]);
  std::printf("helper CPU: traces %.3f s, stats %.3f s, OS %.3f s\n", traced_total, total, os);
  const double tick = 0.001;  // rounding of the clocks
  EXPECT_LE(traced_total, os + tick) << "the traces account for more CPU than the OS charged the helper";
  EXPECT_LE(total, os + tick) << "the stats account for more CPU than the OS charged the helper";
  // Unaccounted: the worker's last moments after its last trace (a stats flush, a look at the store).
  EXPECT_GE(total, 0.9 * os) << "the stats' steps leave much of the helper's CPU unaccounted";
}

}  // namespace
}  // namespace jitcache::testing
