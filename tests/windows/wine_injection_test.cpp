// The Windows build under Wine: the MinGW-built example (static import of OpenCL.dll, and the
// same app loading OpenCL.dll with LoadLibraryW + GetProcAddress) runs under jitcache-run.exe,
// which injects jitcache.dll. Wine's OpenCL.dll forwards to the host's real PoCL (its own kernel
// cache off). The cache it leaves is then read by the Linux store code.
// Wine is run through wine_support.hpp (timeout(1), WINEDEBUG=-all).
#include <gtest/gtest.h>

#include "store/local/disk_store.hpp"
#include "wine_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

struct WindowsRun {
  RunResult result;
  std::vector<nlohmann::json> traces;
  std::map<std::string, int> verdicts;
};

class WineInjection : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  int runs = 0;

  RunResult run_plain(const char* exe) { return wine(example(exe), {}); }

  WindowsRun run_injected(const char* exe) {
    fs::path trace_dir = tmp / ("traces-" + std::to_string(++runs));
    std::vector<std::string> argv = example(exe);
    argv.insert(argv.begin(), JITCACHE_RUN);
    WindowsRun windows;
    windows.result = wine(argv, {{"JITCACHE_DIR", cache.string()},
                                 {"JITCACHE_TRACE", "1"},
                                 {"JITCACHE_TRACE_DIR", trace_dir.string()}});
    windows.traces = read_traces(trace_dir);
    windows.verdicts = count_verdicts(windows.traces);
    return windows;
  }

  // A cold run stores both programs, a warm run hits both, and both print what the app prints
  // without jitcache.
  void expect_miss_then_hit(const char* exe) {
    RunResult plain = run_plain(exe);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    ASSERT_NE(plain.out.find("all results correct"), std::string::npos) << plain.out;

    WindowsRun cold = run_injected(exe);
    ASSERT_EQ(cold.result.exit_code, 0) << cold.result.err;
    EXPECT_EQ(cold.result.out, plain.out);
    EXPECT_EQ(cold.verdicts["miss"], 2) << cold.result.err;
    EXPECT_EQ(cold.verdicts.count("hit"), 0u);
    EXPECT_EQ(entry_files(cache).size(), 2u);

    WindowsRun warm = run_injected(exe);
    ASSERT_EQ(warm.result.exit_code, 0) << warm.result.err;
    EXPECT_EQ(warm.result.out, plain.out);
    EXPECT_EQ(warm.verdicts["hit"], 2) << warm.result.err;
    EXPECT_EQ(warm.verdicts.count("miss"), 0u);
    for (const nlohmann::json& trace : warm.traces) {
      EXPECT_NE(trace.value("process", "").find(".exe"), std::string::npos) << "not the Windows app";
    }
  }
};

TEST_F(WineInjection, ImportedOpenClMissesThenHitsWithIdenticalResults) {
  expect_miss_then_hit(OPENCL_EXAMPLE_EXE);
}

TEST_F(WineInjection, DynamicallyLoadedOpenClMissesThenHitsWithIdenticalResults) {
  expect_miss_then_hit(OPENCL_EXAMPLE_DYNAMIC_EXE);
}

// Issue 41: the Windows import table lacked clCompileProgram and clLinkProgram, so an app that
// compiles and links went around jitcache there. Wine 8's OpenCL.dll does not implement
// clCompileProgram ("fixme: not yet implemented": CL_INVALID_OPERATION), so no compile can succeed
// under Wine: what shows the hook is that the compile is looked up (its trace) and the app gets
// the driver's own error, exactly as without jitcache (tests/integration/opencl_coverage_test.cpp
// shows compile and link missing, then hitting, on Linux with the same hooks).
TEST_F(WineInjection, ClCompileProgramIsHookedAndTheDriversErrorPassesThrough) {
  const fs::path header = tmp / "params.h";
  write_text(header, "#define SCALE 3\n");
  const std::vector<std::string> app = {COMPILE_LINK_APP_EXE, header.string(), "3"};
  RunResult plain = wine(app, {});
  ASSERT_NE(plain.err.find("clCompileProgram main failed"), std::string::npos) << plain.out << plain.err;
  const fs::path trace_dir = tmp / "traces-compile";
  std::vector<std::string> argv = app;
  argv.insert(argv.begin(), JITCACHE_RUN);
  RunResult run = wine(argv, {{"JITCACHE_DIR", cache.string()},
                              {"JITCACHE_TRACE", "1"},
                              {"JITCACHE_TRACE_DIR", trace_dir.string()}});
  EXPECT_EQ(run.exit_code, plain.exit_code);
  EXPECT_EQ(run.out, plain.out);
  EXPECT_NE(run.err.find("clCompileProgram main failed (-59)"), std::string::npos) << run.err;
  const std::vector<nlohmann::json> traces = read_traces(trace_dir);
  ASSERT_EQ(traces.size(), 1u) << "the compile was not looked up: " << run.err;
  EXPECT_EQ(traces[0].value("verdict", ""), "failed") << traces[0].dump();
  EXPECT_EQ(traces[0].value("kind", ""), "compiled") << traces[0].dump();
}

TEST_F(WineInjection, LauncherReturnsTheAppsExitCode) {
  // A missing kernel dir makes the example fail with exit code 1, injected or not.
  RunResult result = wine({JITCACHE_RUN, OPENCL_EXAMPLE_EXE, "--kernels", (tmp / "none").string()},
                          {{"JITCACHE_DIR", cache.string()}});
  EXPECT_EQ(result.exit_code, 1) << result.err;
}

TEST_F(WineInjection, UnloadableDllWarnsOnceAndRunsTheAppUncached) {
  RunResult plain = run_plain(OPENCL_EXAMPLE_EXE);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::vector<std::string> argv = example(OPENCL_EXAMPLE_EXE);
  argv.insert(argv.begin(), JITCACHE_RUN);
  RunResult result = wine(argv, {{"JITCACHE_DIR", cache.string()},
                                 {"JITCACHE_DLL", (tmp / "missing" / "jitcache.dll").string()}});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, plain.out);
  EXPECT_NE(result.err.find("the app runs uncached"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(cache));  // nothing of jitcache ran in the app
}

// Without JITCACHE_DIR the cache goes to %LOCALAPPDATA%\jitcache, which Wine keeps at
// <prefix>/drive_c/users/<user>/AppData/Local.
TEST_F(WineInjection, DefaultRootIsLocalAppData) {
  const fs::path users = fs::path(WINE_PREFIX) / "drive_c" / "users";
  auto default_roots = [&users] {
    std::vector<fs::path> roots;
    std::error_code ec;
    for (const auto& user : fs::directory_iterator(users, ec)) {
      if (fs::exists(user.path() / "AppData" / "Local" / "jitcache")) {
        roots.push_back(user.path() / "AppData" / "Local" / "jitcache");
      }
    }
    return roots;
  };
  for (const fs::path& root : default_roots()) fs::remove_all(root);

  RunResult result = wine({JITCACHE_RUN, OPENCL_EXAMPLE_EXE, "--kernels", EXAMPLE_KERNELS}, {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<fs::path> roots = default_roots();
  ASSERT_EQ(roots.size(), 1u);
  EXPECT_EQ(entry_files(roots.front()).size(), 2u);
  fs::remove_all(roots.front());
}

// The same store format on both systems: the Linux store code opens the cache written by
// jitcache.dll, finds every entry intact, and loads each one.
TEST_F(WineInjection, LinuxStoreReadsTheCacheWrittenOnWindows) {
  WindowsRun cold = run_injected(OPENCL_EXAMPLE_EXE);
  ASSERT_EQ(cold.result.exit_code, 0) << cold.result.err;
  ASSERT_EQ(cold.verdicts["miss"], 2) << cold.result.err;

  std::string error;
  std::unique_ptr<DiskStore> store = DiskStore::open(cache, StoreLimits{}, &error);
  ASSERT_TRUE(store) << error;
  EXPECT_TRUE(store->verify(false).empty());
  std::vector<EntryInfo> entries = store->list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(store->size().entries, 2u);
  for (const EntryInfo& entry : entries) {
    EXPECT_EQ(entry.sidecar.value("api", ""), "opencl");
    LoadResult loaded = store->load(entry.key);
    EXPECT_EQ(loaded.status, LoadStatus::hit) << loaded.reason;
    EXPECT_EQ(loaded.binary.size(), entry.sidecar.value("binary_size", 0u));
  }
  // The traces name the keys the Windows side used; they are the Linux store's keys.
  for (const nlohmann::json& trace : cold.traces) {
    const std::string key = trace.value("key", "");
    EXPECT_TRUE(std::any_of(entries.begin(), entries.end(),
                            [&](const EntryInfo& entry) { return entry.key.hex() == key; }))
        << key;
  }
}

}  // namespace
}  // namespace jitcache::testing
