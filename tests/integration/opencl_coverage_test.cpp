// Every way an app builds OpenCL programs, on real PoCL through the real ocl-icd loader: apps that
// dlopen the loader (ICD layer), pyopencl, clCompileProgram + clLinkProgram, and processes that
// load jitcache both as a layer and with LD_PRELOAD. PoCL's own kernel cache is off throughout.
#include <CL/cl_layer.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

enum class Via { layer, preload, both };

void expect_success(const RunResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("all results correct"), std::string::npos) << result.out << result.err;
}

class OpenClCoverage : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  int runs = 0;

  CachedRun run_cached(Via via, const std::vector<std::string>& argv, std::map<std::string, std::string> extra = {}) {
    fs::path trace_dir = tmp / ("traces-" + std::to_string(++runs));
    RunOptions options;
    options.env = {{"JITCACHE_DIR", cache.string()},
                   {"JITCACHE_TRACE", "1"},
                   {"JITCACHE_TRACE_DIR", trace_dir.string()},
                   {"POCL_KERNEL_CACHE", "0"}};
    options.unset = {"LD_PRELOAD", "OPENCL_LAYERS"};
    if (via != Via::preload) options.env["OPENCL_LAYERS"] = JITCACHE_LIBRARY;
    if (via != Via::layer) options.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    for (auto& [name, value] : extra) options.env[name] = value;
    return run_traced(argv, options, trace_dir);
  }

  // The app builds `programs` programs: a cold run under `via` misses each, a warm one hits each,
  // and both print what the run without jitcache printed.
  void expect_cold_misses_then_warm_hits(Via via, const std::vector<std::string>& argv, int programs,
                                         const std::map<std::string, std::string>& extra = {}) {
    RunResult plain = run_plain(argv, extra);
    expect_success(plain);
    CachedRun first = run_cached(via, argv, extra);
    expect_success(first.result);
    EXPECT_EQ(first.result.out, plain.out);
    EXPECT_EQ(first.verdicts["miss"], programs);
    CachedRun second = run_cached(via, argv, extra);
    expect_success(second.result);
    EXPECT_EQ(second.result.out, plain.out);
    EXPECT_EQ(second.verdicts["hit"], programs);
    EXPECT_EQ(second.traces.size(), static_cast<std::size_t>(programs));
  }
};

// The layer entry points as a loader calls them; bad tables are refused, never dereferenced.
TEST(OpenClLayerEntryPoints, DescribeTheLayerAndRefuseBadTables) {
  void* library = dlopen(JITCACHE_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto get_info = reinterpret_cast<pfn_clGetLayerInfo>(dlsym(library, "clGetLayerInfo"));
  auto init = reinterpret_cast<pfn_clInitLayer>(dlsym(library, "clInitLayer"));
  ASSERT_TRUE(get_info && init);
  cl_layer_api_version version = 0;
  EXPECT_EQ(get_info(CL_LAYER_API_VERSION, sizeof version, &version, nullptr), CL_SUCCESS);
  EXPECT_EQ(version, static_cast<cl_layer_api_version>(CL_LAYER_API_VERSION_100));
  char name[128] = {};
  EXPECT_EQ(get_info(CL_LAYER_NAME, sizeof name, name, nullptr), CL_SUCCESS);
  EXPECT_NE(std::strstr(name, "jitcache"), nullptr);
  EXPECT_EQ(get_info(CL_LAYER_NAME, 2, name, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(get_info(0x1234, sizeof name, name, nullptr), CL_INVALID_VALUE);

  cl_uint entries = 0;
  const cl_icd_dispatch* layer = nullptr;
  EXPECT_EQ(init(0, nullptr, &entries, &layer), CL_INVALID_VALUE);
  cl_icd_dispatch empty;
  std::memset(&empty, 0, sizeof empty);
  EXPECT_EQ(init(sizeof empty / sizeof(void*), &empty, &entries, &layer), CL_INVALID_VALUE);
  EXPECT_EQ(init(3, &empty, &entries, &layer), CL_INVALID_VALUE);  // a table too short to hold the hooks' targets
  EXPECT_EQ(layer, nullptr);
}

TEST_F(OpenClCoverage, DlopenedLoaderHitsOnSecondRunUnderTheLayer) {
  RunResult plain = run_plain({DLOPEN_APP});
  expect_success(plain);

  CachedRun first = run_cached(Via::layer, {DLOPEN_APP});
  expect_success(first.result);
  EXPECT_EQ(first.result.out, plain.out);
  EXPECT_EQ(first.verdicts["miss"], 1);
  EXPECT_EQ(first.traces.size(), 1u);

  CachedRun second = run_cached(Via::layer, {DLOPEN_APP});
  expect_success(second.result);
  EXPECT_EQ(second.result.out, plain.out);
  EXPECT_EQ(second.verdicts["hit"], 1);
  EXPECT_EQ(second.traces.size(), 1u);
}

// Symbol interposition never sees calls through pointers dlsym'ed from the loader's own handle,
// so the preloaded library lists itself in OPENCL_LAYERS (shim/linux/preload_lists_layer.cpp):
// such an app is cached under plain LD_PRELOAD too (it was only left unharmed before).
TEST_F(OpenClCoverage, DlopenedLoaderUnderPreloadIsCachedThroughTheLayer) {
  expect_cold_misses_then_warm_hits(Via::preload, {DLOPEN_APP}, 1);
}

// LD_PRELOAD and OPENCL_LAYERS together, as the same file and as two copies of the library: the
// layer owns the hooks, so each build is looked up exactly once.
TEST_F(OpenClCoverage, PreloadAndLayerTogetherHookEachBuildOnce) {
  fs::path copy = tmp / "libjitcache-copy.so";
  fs::copy_file(JITCACHE_LIBRARY, copy);
  for (const std::string& layer : {std::string(JITCACHE_LIBRARY), copy.string()}) {
    SCOPED_TRACE(layer);
    fs::remove_all(cache);
    CachedRun first = run_cached(Via::both, {OPENCL_EXAMPLE}, {{"OPENCL_LAYERS", layer}});
    expect_success(first.result);
    EXPECT_EQ(first.traces.size(), 2u);  // the example builds two programs
    EXPECT_EQ(first.verdicts["miss"], 2);
    CachedRun second = run_cached(Via::both, {OPENCL_EXAMPLE}, {{"OPENCL_LAYERS", layer}});
    expect_success(second.result);
    EXPECT_EQ(second.traces.size(), 2u);
    EXPECT_EQ(second.verdicts["hit"], 2);
  }
}

TEST_F(OpenClCoverage, PyOpenClWithItsCacheOffHitsOnSecondRun) {
  expect_cold_misses_then_warm_hits(Via::layer, {"/usr/bin/python3", PYOPENCL_SCRIPT}, 2, {{"PYOPENCL_NO_CACHE", "1"}, {"PYOPENCL_CTX", "0"}});
}

// Issue 14, case 1: a plugin linked against libOpenCL and dlopen'ed RTLD_LOCAL (any Python
// extension) calls the preloaded hooks, but dlsym(RTLD_NEXT) cannot see its loader. The hooks find
// the loaded loader anyway, so the app runs (it crashed in clCreateProgramWithSource) and is cached.
TEST_F(OpenClCoverage, PluginWithItsOwnLoaderIsCachedUnderPreload) {
  expect_cold_misses_then_warm_hits(Via::preload, {PLUGIN_HOST_APP, OPENCL_PLUGIN}, 1);
}

TEST_F(OpenClCoverage, PyOpenClIsCachedUnderPreload) {
  expect_cold_misses_then_warm_hits(Via::preload, {"/usr/bin/python3", PYOPENCL_SCRIPT}, 2, {{"PYOPENCL_NO_CACHE", "1"}, {"PYOPENCL_CTX", "0"}});
}

// The app prints what it asks about each compiled object (build log, status, options, binary
// type, binary size: hashcat asks for the log right after each compile); those answers must not
// need the compile. Real compiles are counted in PoCL's own debug output.
TEST_F(OpenClCoverage, CompileAndLinkServedFromCacheCompileNothing) {
  fs::path header = tmp / "params.h";
  write_text(header, "#define SCALE 5\n");
  std::vector<std::string> app = {COMPILE_LINK_APP, header.string(), "5"};
  std::map<std::string, std::string> verbose = {{"JITCACHE_LOG", "info"}, {"POCL_DEBUG", "llvm"}};
  auto compiles = [](const RunResult& result) {  // PoCL logs this once per compile from source
    int count = 0;
    for (size_t at = result.err.find("building from sources"); at != std::string::npos;
         at = result.err.find("building from sources", at + 1)) {
      ++count;
    }
    return count;
  };
  RunResult plain = run_plain(app, verbose);
  expect_success(plain);
  EXPECT_EQ(compiles(plain), 2);
  EXPECT_NE(plain.out.find("main log: size 1 \"\""), std::string::npos) << plain.out;

  CachedRun first = run_cached(Via::preload, app, verbose);
  expect_success(first.result);
  EXPECT_EQ(first.result.out, plain.out);
  EXPECT_EQ(compiles(first.result), 2);
  EXPECT_EQ(first.count("compiled", "miss"), 2);
  EXPECT_EQ(first.count("linked", "miss"), 1);
  EXPECT_EQ(first.traces.size(), 3u);

  // Second run, through the layer this time (same keys): both compiles are deferred and never run,
  // not even for the app's queries on the objects; the linked binary comes from the cache.
  CachedRun second = run_cached(Via::layer, app, verbose);
  expect_success(second.result);
  EXPECT_EQ(second.result.out, plain.out);
  EXPECT_EQ(compiles(second.result), 0) << second.result.err;
  EXPECT_EQ(second.count("compiled", "hit"), 2);
  EXPECT_EQ(second.count("linked", "hit"), 1);
  EXPECT_EQ(second.verdicts["miss"], 0);
  EXPECT_EQ(second.result.err.find("running a deferred clCompileProgram"), std::string::npos) << second.result.err;

  // A different header through input_headers: that object and the link miss; the untouched
  // helper's deferred compile runs for the real link.
  write_text(header, "#define SCALE 9\n");
  std::vector<std::string> changed = {COMPILE_LINK_APP, header.string(), "9"};
  CachedRun third = run_cached(Via::preload, changed, verbose);
  expect_success(third.result);
  EXPECT_EQ(third.result.out, run_plain(changed).out);
  EXPECT_EQ(compiles(third.result), 2);
  EXPECT_EQ(third.count("compiled", "miss"), 1);
  EXPECT_EQ(third.count("compiled", "hit"), 1);
  EXPECT_EQ(third.count("linked", "miss"), 1);
  EXPECT_NE(third.result.err.find("running a deferred clCompileProgram"), std::string::npos) << third.result.err;
}

// A compile log longer than the sidecar's 4 KiB excerpt is answered from the recorded answers,
// which keep it whole: the warm run's log query needs no compile (it ran the deferred compile
// before, to ask the driver).
TEST_F(OpenClCoverage, LongCompileLogIsAnsweredWithoutCompiling) {
  fs::path header = tmp / "params.h";
  std::string text = "#define SCALE 5\n";
  for (int i = 0; i < 40; ++i) text += "#warning \"a long compile log, line " + std::to_string(i) + "\"\n";
  write_text(header, text);
  std::vector<std::string> app = {COMPILE_LINK_APP, header.string(), "5"};
  std::map<std::string, std::string> verbose = {{"JITCACHE_LOG", "info"}, {"POCL_DEBUG", "llvm"}};
  auto log_size = [](const std::string& out) {  // the log names a random temp file: compare its size
    std::size_t at = out.find("main log: size ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find(' ', at + 15) - at);
  };
  RunResult plain = run_plain(app, verbose);
  expect_success(plain);
  ASSERT_GT(std::stoul(log_size(plain.out).substr(15)), 4096u) << plain.out;
  expect_success(run_cached(Via::preload, app, verbose).result);
  CachedRun warm = run_cached(Via::preload, app, verbose);
  expect_success(warm.result);
  EXPECT_EQ(log_size(warm.result.out), log_size(plain.out));
  EXPECT_EQ(warm.count("compiled", "hit"), 2);
  EXPECT_EQ(warm.result.err.find("building from sources"), std::string::npos);
  EXPECT_EQ(warm.result.err.find("running a deferred clCompileProgram"), std::string::npos) << warm.result.err;
}

// clCreateProgramWithIL + clSetProgramSpecializationConstant on the IL test driver (PoCL 3.1 has no
// IL support), loaded by the real ocl-icd loader: a constant's value is part of the key. The first
// pair of runs goes through the layer, the second through LD_PRELOAD: the key is the same either way.
TEST_F(OpenClCoverage, IlWithSpecConstantsMissesOnValueChangeAndHitsOnSameValue) {
  fs::path vendors = tmp / "vendors";
  fs::create_directories(vendors);
  write_text(vendors / "jitcache-test-il.icd", std::string(TEST_IL_ICD) + "\n");
  fs::path compile_log = tmp / "compiles.log";
  std::map<std::string, std::string> env = {{"OCL_ICD_VENDORS", vendors.string()},
                                            {"JITCACHE_TEST_IL_COMPILE_LOG", compile_log.string()}};
  auto compiles = [&] {
    std::string log = fs::exists(compile_log) ? read_text(compile_log) : std::string();
    return static_cast<int>(std::count(log.begin(), log.end(), '\n'));
  };
  std::vector<std::string> five = {IL_SPEC_APP, IL_FIXTURE, "7=5"};
  std::vector<std::string> six = {IL_SPEC_APP, IL_FIXTURE, "7=6"};

  RunResult plain = run_plain(five, env);
  expect_success(plain);
  EXPECT_NE(plain.out.find("fill_scaled: spec 7=5 9=100"), std::string::npos) << plain.out;
  ASSERT_EQ(compiles(), 1);  // the driver counts its compiles

  CachedRun first = run_cached(Via::layer, five, env);
  expect_success(first.result);
  EXPECT_EQ(first.result.out, plain.out);
  EXPECT_EQ(first.count("il", "miss"), 1);
  EXPECT_EQ(compiles(), 2);

  CachedRun same = run_cached(Via::layer, five, env);
  expect_success(same.result);
  EXPECT_EQ(same.result.out, plain.out);
  EXPECT_EQ(same.count("il", "hit"), 1);
  EXPECT_EQ(compiles(), 2);  // served from the cache: no compile

  CachedRun changed = run_cached(Via::preload, six, env);
  expect_success(changed.result);
  EXPECT_NE(changed.result.out.find("fill_scaled: spec 7=6 9=100"), std::string::npos) << changed.result.out;
  EXPECT_EQ(changed.count("il", "miss"), 1);
  EXPECT_EQ(compiles(), 3);
  ASSERT_EQ(changed.traces.size(), 1u);
  EXPECT_EQ(changed.traces[0]["components"]["spec_constants"]["value"][0]["value_hex"], "06000000");

  CachedRun six_again = run_cached(Via::preload, six, env);
  expect_success(six_again.result);
  EXPECT_EQ(six_again.result.out, changed.result.out);
  EXPECT_EQ(six_again.count("il", "hit"), 1);
  EXPECT_EQ(compiles(), 3);
}

}  // namespace
}  // namespace jitcache::testing
