// The real-application suite (ctest label `apps`): programs nobody here wrote, from Debian
// packages, plus the repo's examples, run exactly as a user would under every way of injecting
// jitcache. Each app: a plain run (the reference), then cold and warm runs under LD_PRELOAD,
// OPENCL_LAYERS and `jitcache run`, with PoCL's kernel cache on, and cold + warm through the
// layer with it off. Every run's stdout must equal the plain run's; every warm run must be all
// hits, under LD_PRELOAD too (the preloaded library lists itself as a layer, so apps that dlopen
// libOpenCL are seen). hashcat's `#include M2S(INCLUDE_PATH/inc_vendor.h)` is a computed include
// that the scan expands exactly (hashing/include_macros.hpp), so it hits too. The matrix and its trims: docs/reliability.md, "The apps suite".
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

struct App {
  std::string name;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  // Apps with a binary cache of their own that must start empty on every run (hashcat): the
  // variable that names its folder, set to a fresh one per run.
  std::string own_cache_variable;
};

void PrintTo(const App& app, std::ostream* out) { *out << app.name; }  // test names, not bytes

enum class Via { preload, layer, jitcache_run };

const char* via_name(Via via) {
  switch (via) {
    case Via::preload:
      return "LD_PRELOAD";
    case Via::layer:
      return "OPENCL_LAYERS";
    case Via::jitcache_run:
      return "jitcache run";
  }
  return "";
}

App app(std::string name, std::vector<std::string> argv, std::map<std::string, std::string> env = {},
        std::string own_cache_variable = {}) {
  return {std::move(name), std::move(argv), std::move(env), std::move(own_cache_variable)};
}

std::vector<App> apps() {
  const std::string python = "/usr/bin/python3";
  const fs::path here = APPS_SOURCE_DIR;
  return {
      app("pyopencl", {python, (here / "pyopencl_array_app.py").string()},
          {{"PYOPENCL_NO_CACHE", "1"}, {"PYOPENCL_CTX", "0"}}),
      app("opencv", {python, (here / "opencv_umat_app.py").string()},
          {{"OPENCV_OPENCL_DEVICE", ":CPU:"}, {"OPENCV_OPENCL_CACHE_ENABLE", "0"}}),
      app("clblast", {"/usr/bin/clblast_test_xscal"}),
      // hashcat keeps its session files (and a pid file that refuses a second instance) under the
      // passwd home whatever HOME says: a session of our own keeps concurrent runs on this
      // machine (other suites, bench/clients.sh) from failing it.
      app("hashcat",
          {"/usr/bin/hashcat", "--session=jitcache-apps-" + std::to_string(::getpid()), "-m", "0", "-a", "0",
           "--potfile-disable", "--quiet", "--backend-ignore-cuda",
           "--backend-ignore-hip", "-O", "-w", "1", (here / "hashcat" / "md5.hash").string(),
           (here / "hashcat" / "words.txt").string()},
          {}, "XDG_CACHE_HOME"),
      app("opencl_example", {OPENCL_EXAMPLE, "--kernels", EXAMPLE_KERNELS}),
      app("opencl_threads", {OPENCL_THREADS, "--threads", "4", "--kernels", EXAMPLE_KERNELS}),
  };
}

class RealApp : public ::testing::TestWithParam<App> {
 protected:
  TempDir tmp;
  fs::path pocl_dir = tmp / "pocl";  // one per test, shared by its runs (as one user's would be)
  int runs = 0;
  std::string cold_device;  // the device of the last cold run's first trace

  RunOptions options(const std::string& kernel_cache) {
    const App& app = GetParam();
    RunOptions o;
    o.env = app.env;
    o.env["POCL_KERNEL_CACHE"] = kernel_cache;
    o.env["POCL_CACHE_DIR"] = pocl_dir.string();
    o.env["HOME"] = (tmp / "home").string();  // apps keep their own state out of the real home
    if (!app.own_cache_variable.empty()) o.env[app.own_cache_variable] = (tmp / ("own-" + std::to_string(runs))).string();
    o.unset = {"LD_PRELOAD", "OPENCL_LAYERS", "JITCACHE_DIR", "JITCACHE_DISABLE"};
    o.timeout_s = 400;
    return o;
  }

  // The reference run, without jitcache. An OpenCL layer logs the app's calls meanwhile, which
  // changes nothing it computes: the builds of programs from source or IL it counts (not
  // jitcache's counters) are what each cached run must trace, one lookup or uncacheable record each.
  RunResult run_plain(const std::string& kernel_cache, int* app_builds) {
    ++runs;
    const fs::path log = tmp / ("calls-" + std::to_string(runs));
    RunOptions o = options(kernel_cache);
    o.env["OPENCL_LAYERS"] = CALL_LOG_LAYER;
    o.env["JITCACHE_TEST_CALL_LOG"] = log.string();
    o.unset.erase(std::remove(o.unset.begin(), o.unset.end(), "OPENCL_LAYERS"), o.unset.end());
    RunResult plain = run(GetParam().argv, o);
    std::ifstream in(log);
    *app_builds = 0;
    for (std::string line; std::getline(in, line);) {
      *app_builds += line == "build source" || line == "build il" || line == "compile source" || line == "link";
    }
    return plain;
  }

  CachedRun run_cached(Via via, const fs::path& cache, const std::string& kernel_cache) {
    fs::path trace_dir = tmp / ("traces-" + std::to_string(++runs));
    RunOptions o = options(kernel_cache);
    o.env["JITCACHE_DIR"] = cache.string();
    o.env["JITCACHE_TRACE"] = "1";
    o.env["JITCACHE_TRACE_DIR"] = trace_dir.string();
    std::vector<std::string> argv = GetParam().argv;
    if (via == Via::preload) o.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    if (via == Via::layer) o.env["OPENCL_LAYERS"] = JITCACHE_LIBRARY;
    if (via == Via::jitcache_run) argv.insert(argv.begin(), {JITCACHE_TOOL, "run", "--"});
    return run_traced(argv, o, trace_dir);
  }

  // Cold then warm on a fresh cache: both print what the plain run printed, the cold run builds
  // something, the warm run is served entirely from the cache.
  void cold_then_warm(Via via, const std::string& kernel_cache, const RunResult& plain, int app_builds) {
    SCOPED_TRACE(std::string(via_name(via)) + ", POCL_KERNEL_CACHE=" + kernel_cache);
    const fs::path cache = tmp / ("cache-" + std::to_string(runs));
    CachedRun cold = run_cached(via, cache, kernel_cache);
    ASSERT_EQ(cold.result.exit_code, 0) << cold.result.err;
    if (!cold.traces.empty()) cold_device = cold.traces[0].value("device", std::string());
    EXPECT_EQ(cold.result.out, plain.out);
    CachedRun warm = run_cached(via, cache, kernel_cache);
    ASSERT_EQ(warm.result.exit_code, 0) << warm.result.err;
    EXPECT_EQ(warm.result.out, plain.out);
    EXPECT_GT(cold.traces.size(), 0u);
    EXPECT_EQ(static_cast<int>(cold.traces.size()), app_builds) << "the app's builds, counted by a layer";
    EXPECT_GT(cold.verdicts["miss"], 0);
    EXPECT_EQ(warm.traces.size(), cold.traces.size());
    EXPECT_EQ(warm.verdicts["hit"], static_cast<int>(warm.traces.size()))
        << "warm run: " << warm.verdicts["miss"] << " misses, " << warm.verdicts["uncacheable"] << " uncacheable";
  }
};

TEST_P(RealApp, OutputUnchangedAndWarmRunAllHitsUnderEveryInjection) {
  int app_builds = 0;
  RunResult plain = run_plain("1", &app_builds);
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  ASSERT_FALSE(plain.out.empty());
  for (Via via : {Via::preload, Via::layer, Via::jitcache_run}) cold_then_warm(via, "1", plain, app_builds);
  // PoCL's kernel cache off: every load of a cached binary gets its own scratch folder
  // (driver_quirks.hpp). Through the layer, which sees every app. PoCL's cache setting does not
  // change what an app computes, so the plain run above stays the reference (a second plain run
  // would cost hashcat another minute of compiling).
  cold_then_warm(Via::layer, "0", plain, app_builds);
}

// Issue 14 class: with capture = release the programs pyopencl never releases are stored at exit.
// Reading their binaries makes PoCL compile with LLVM, whose function-local statics were
// registered for destruction after jitcache's atexit handler and so were already freed when it
// ran: the app died in exit() (heap corruption, SIGSEGV/SIGBUS). The capture now runs from a
// main-thread thread_local destructor, before any exit handler (shim/opencl/binary_capture.cpp).
TEST(CaptureAtRelease, PyopenclExitsCleanlyAndItsProgramsStoredAtExitHitWarm) {
  TempDir tmp;
  RunOptions o;
  o.env = {{"PYOPENCL_NO_CACHE", "1"}, {"PYOPENCL_CTX", "0"}, {"POCL_KERNEL_CACHE", "0"},
           {"HOME", (tmp / "home").string()}};
  o.unset = {"LD_PRELOAD", "OPENCL_LAYERS", "JITCACHE_DIR", "JITCACHE_DISABLE", "JITCACHE_CAPTURE"};
  o.timeout_s = 300;
  const std::vector<std::string> argv = {"/usr/bin/python3",
                                         (fs::path(APPS_SOURCE_DIR) / "pyopencl_exit_capture_app.py").string()};
  RunResult plain = run(argv, o);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_FALSE(plain.out.empty());
  o.env["OPENCL_LAYERS"] = JITCACHE_LIBRARY;
  o.env["JITCACHE_DIR"] = (tmp / "cache").string();
  o.env["JITCACHE_CAPTURE"] = "release";
  o.env["JITCACHE_TRACE"] = "1";
  std::vector<CachedRun> runs;
  for (const char* name : {"cold", "warm"}) {
    SCOPED_TRACE(name);
    const fs::path trace_dir = tmp / (std::string("traces-") + name);
    o.env["JITCACHE_TRACE_DIR"] = trace_dir.string();
    runs.push_back(run_traced(argv, o, trace_dir));
    ASSERT_EQ(runs.back().result.exit_code, 0) << runs.back().result.err;
    EXPECT_EQ(runs.back().result.out, plain.out);
  }
  EXPECT_GT(runs[0].verdicts["miss"], 0);
  EXPECT_EQ(runs[1].traces.size(), runs[0].traces.size());
  EXPECT_EQ(runs[1].verdicts["hit"], static_cast<int>(runs[1].traces.size()))
      << "warm run: " << runs[1].verdicts["miss"] << " misses, " << runs[1].verdicts["uncacheable"] << " uncacheable";
}

// Issue 28 item 8: a second real driver, Mesa's rusticl (llvmpipe), alone in the ICD loader's list.
// The few apps that show it in seconds: CLBlast (Debian's, nobody here wrote it) and the example,
// preloaded and as a layer, cold then warm. pyopencl's array script is not among them: clmath
// needs doubles, which llvmpipe lacks (it crashes without jitcache too).
class RusticlApp : public RealApp {};

std::vector<App> rusticl_apps() {
  const std::map<std::string, std::string> rusticl = {
      {"OCL_ICD_VENDORS", std::string(JITCACHE_TEST_VENDORS) + "/rusticl"}, {"RUSTICL_ENABLE", "llvmpipe"}};
  return {app("clblast", {"/usr/bin/clblast_test_xscal"}, rusticl),
          app("opencl_example", {OPENCL_EXAMPLE, "--kernels", EXAMPLE_KERNELS}, rusticl)};
}

TEST_P(RusticlApp, OutputUnchangedAndWarmRunAllHits) {
  int app_builds = 0;
  RunResult plain = run_plain("1", &app_builds);
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  for (Via via : {Via::preload, Via::layer}) {
    cold_then_warm(via, "1", plain, app_builds);
    EXPECT_NE(cold_device.find("llvmpipe"), std::string::npos) << "not on rusticl: " << cold_device;
  }
}

INSTANTIATE_TEST_SUITE_P(Rusticl, RusticlApp, ::testing::ValuesIn(rusticl_apps()),
                         [](const ::testing::TestParamInfo<App>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Apps, RealApp, ::testing::ValuesIn(apps()),
                         [](const ::testing::TestParamInfo<App>& info) { return info.param.name; });

}  // namespace
}  // namespace jitcache::testing
