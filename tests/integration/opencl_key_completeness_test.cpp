// The key must see every input of a build, or the build must not be cached (issue 15.1/15.2).
// Each case builds a kernel on real PoCL, changes an input the include scan used to miss, and
// requires the output under jitcache to equal the run without it, with the trace saying why.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

// The kernel every case builds: out[i] = V * i, V decided by the headers.
constexpr const char* kKernelBody =
    "__kernel void compute(__global int* out) { int i = get_global_id(0); out[i] = V * i; }\n";

class KeyCompleteness : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path src = tmp / "src";
  fs::path kernel = src / "kernel.cl";
  int runs = 0;

  void SetUp() override { fs::create_directories(src); }

  std::vector<std::string> app(const std::string& options) { return {KERNEL_FILE_APP, kernel.string(), options}; }

  CachedRun run_cached(const std::vector<std::string>& argv, RunOptions options = {}) {
    const fs::path traces = tmp / ("traces-" + std::to_string(++runs));
    options.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    options.env["JITCACHE_DIR"] = cache.string();
    options.env["JITCACHE_TRACE"] = "1";
    options.env["JITCACHE_TRACE_DIR"] = traces.string();
    options.env["POCL_KERNEL_CACHE"] = "0";
    CachedRun done = run_traced(argv, options, traces);
    EXPECT_EQ(done.result.exit_code, 0) << done.result.err;
    return done;
  }

  static RunResult run_plain(const std::vector<std::string>& argv, RunOptions options = {}) {
    options.env["POCL_KERNEL_CACHE"] = "0";
    options.unset.push_back("LD_PRELOAD");
    RunResult result = run(argv, options);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result;
  }

  static std::string reasons(const CachedRun& cached) {
    std::string all;
    for (const auto& trace : cached.traces) all += trace.value("reason", std::string()) + "\n";
    return all;
  }

  // Cold run, then `change`, then the run after the change must equal the plain run and differ
  // from before the change (so the case really changes the output).
  CachedRun expect_change_seen(const std::vector<std::string>& argv, const std::function<void()>& change,
                               const RunOptions& options = {}) {
    CachedRun cold = run_cached(argv, options);
    EXPECT_EQ(cold.result.out, run_plain(argv, options).out);
    change();
    const RunResult plain = run_plain(argv, options);
    EXPECT_NE(plain.out, cold.result.out) << "the change should change the result";
    CachedRun after = run_cached(argv, options);
    EXPECT_EQ(after.result.out, plain.out) << reasons(after);
    EXPECT_EQ(after.verdicts["hit"], 0) << reasons(after);
    return after;
  }
};

// hashcat's spelling: the header named through -D macros and # stringification is found and keyed.
TEST_F(KeyCompleteness, ComputedIncludeExpandedExactlyIsKeyed) {
  write_text(src / "cfg.h", "#define V 1\n");
  write_text(kernel, std::string("#ifdef KERNEL_STATIC\n#include M2S(INCLUDE_PATH/cfg.h)\n#endif\n") + kKernelBody);
  const auto argv = app("-D KERNEL_STATIC -D INCLUDE_PATH=" + src.string() + " -D XM2S(x)=#x -D M2S(x)=XM2S(x)");
  EXPECT_EQ(run_cached(argv).verdicts["miss"], 1);
  EXPECT_EQ(run_cached(argv).verdicts["hit"], 1);
  CachedRun after = expect_change_seen(argv, [&] { write_text(src / "cfg.h", "#define V 2\n"); });
  EXPECT_EQ(after.verdicts["miss"], 1) << reasons(after);
}

TEST_F(KeyCompleteness, ComputedIncludeTheScanCannotExpandIsUncacheable) {
  write_text(src / "cfg.h", "#define V 1\n");
  // A definition under #ifndef: whether it is the one in force depends on what the scan ignores.
  write_text(kernel, std::string("#ifndef CFG\n#define CFG \"cfg.h\"\n#endif\n#include CFG\n") + kKernelBody);
  CachedRun after = expect_change_seen(app("-I " + src.string()), [&] { write_text(src / "cfg.h", "#define V 2\n"); });
  EXPECT_EQ(after.verdicts["uncacheable"], 1);
  EXPECT_NE(reasons(after).find("computed #include (#include CFG): `CFG` is defined inside #if"), std::string::npos)
      << reasons(after);
  EXPECT_TRUE(entry_files(cache).empty());

  // `jitcache explain` names the reason too.
  fs::path trace;
  for (const auto& file : fs::directory_iterator(tmp / ("traces-" + std::to_string(runs)))) {
    if (file.path().extension() == ".json") trace = file.path();
  }
  RunOptions tool;
  tool.env["JITCACHE_DIR"] = cache.string();
  RunResult explained = run({JITCACHE_TOOL, "explain", trace.string()}, tool);
  EXPECT_NE(explained.out.find("uncacheable: include scan: computed #include"), std::string::npos)
      << explained.out << explained.err;
}

// PoCL builds with -Dinline=, so the compiler reads `sub/inline/cfg.h` as sub//cfg.h: a scan that
// took `inline` for a plain word would key the wrong header and serve a stale binary.
TEST_F(KeyCompleteness, ComputedIncludeThroughACompilerMacroIsUncacheable) {
  fs::create_directories(src / "sub" / "inline");
  write_text(src / "sub" / "cfg.h", "#define V 1\n");
  write_text(src / "sub" / "inline" / "cfg.h", "#define V 7\n");
  write_text(kernel, std::string("#define S(x) #x\n#define XS(x) S(x)\n#include XS(sub/inline/cfg.h)\n") + kKernelBody);
  CachedRun after =
      expect_change_seen(app("-I " + src.string()), [&] { write_text(src / "sub" / "cfg.h", "#define V 2\n"); });
  EXPECT_EQ(after.verdicts["uncacheable"], 1);
  EXPECT_NE(reasons(after).find("`inline` may be a macro the compiler predefines"), std::string::npos)
      << reasons(after);
}

TEST_F(KeyCompleteness, DigraphIncludeIsFollowed) {
  write_text(src / "cfg.h", "#define V 1\n");
  write_text(kernel, std::string("%:include \"cfg.h\"\n") + kKernelBody);
  const auto argv = app("-I " + src.string());
  run_cached(argv);
  EXPECT_EQ(run_cached(argv).verdicts["hit"], 1);
  CachedRun after = expect_change_seen(argv, [&] { write_text(src / "cfg.h", "#define V 3\n"); });
  EXPECT_EQ(after.verdicts["miss"], 1);
}

TEST_F(KeyCompleteness, IncludeDirsFromDriverFlagsInTheEnvironmentAreFollowed) {
  write_text(src / "cfg.h", "#define V 1\n");
  write_text(kernel, std::string("#include \"cfg.h\"\n") + kKernelBody);
  RunOptions options;
  options.env["POCL_EXTRA_BUILD_FLAGS"] = "-I" + src.string();
  CachedRun after = expect_change_seen(app(""), [&] { write_text(src / "cfg.h", "#define V 4\n"); }, options);
  EXPECT_EQ(after.verdicts["miss"], 1);

  // A flag that changes the search in a way the scan does not model: not cached, with the reason.
  options.env["POCL_EXTRA_BUILD_FLAGS"] = "-I" + src.string() + " -iquote " + src.string();
  CachedRun unmodelled = run_cached(app(""), options);
  EXPECT_EQ(unmodelled.verdicts["uncacheable"], 1);
  EXPECT_NE(reasons(unmodelled).find("-iquote in POCL_EXTRA_BUILD_FLAGS"), std::string::npos) << reasons(unmodelled);
}

TEST_F(KeyCompleteness, HasIncludeProbeIsKeyed) {
  write_text(kernel,
             std::string("#if __has_include(\"feat.h\")\n#define V 5\n#else\n#define V 1\n#endif\n") + kKernelBody);
  const auto argv = app("-I " + src.string());
  run_cached(argv);
  EXPECT_EQ(run_cached(argv).verdicts["hit"], 1);
  CachedRun after = expect_change_seen(argv, [&] { write_text(src / "feat.h", "\n"); });
  EXPECT_EQ(after.verdicts["miss"], 1);
}

TEST_F(KeyCompleteness, IncludeChainDeeperThanTheScanIsUncacheable) {
  constexpr int kDepth = 70;
  for (int i = 0; i < kDepth; ++i) {
    write_text(src / ("h" + std::to_string(i) + ".h"), "#include \"h" + std::to_string(i + 1) + ".h\"\n");
  }
  write_text(src / ("h" + std::to_string(kDepth) + ".h"), "#define V 1\n");
  write_text(kernel, std::string("#include \"h0.h\"\n") + kKernelBody);
  CachedRun after = expect_change_seen(app("-I " + src.string()), [&] {
    write_text(src / ("h" + std::to_string(kDepth) + ".h"), "#define V 6\n");
  });
  EXPECT_EQ(after.verdicts["uncacheable"], 1);
  EXPECT_NE(reasons(after).find("deeper than 64"), std::string::npos) << reasons(after);
}

// A header whose time says it changed after jitcache hashed it (here: stamped an hour into the
// future, as an edit during the build would stamp it): the binary is used but never stored.
TEST_F(KeyCompleteness, HeaderChangedDuringTheBuildIsNotStored) {
  write_text(src / "cfg.h", "#define V 7\n");
  write_text(kernel, std::string("#include \"cfg.h\"\n") + kKernelBody);
  fs::last_write_time(src / "cfg.h", fs::file_time_type::clock::now() + std::chrono::hours(1));
  const auto argv = app("-I " + src.string());
  const RunResult plain = run_plain(argv);
  for (int round = 0; round < 2; ++round) {
    CachedRun cached = run_cached(argv);
    EXPECT_EQ(cached.result.out, plain.out);
    EXPECT_EQ(cached.verdicts["uncacheable"], 1) << reasons(cached);
    EXPECT_NE(reasons(cached).find("input changed during the build"), std::string::npos) << reasons(cached);
  }
  EXPECT_TRUE(entry_files(cache).empty());
}

}  // namespace
}  // namespace jitcache::testing
