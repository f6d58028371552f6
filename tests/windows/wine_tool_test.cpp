// The jitcache command line tool built for Windows (jitcache.exe) under Wine: `jitcache.exe run`
// injects jitcache.dll into the MinGW-built example with the injector jitcache-run.exe uses, the
// settings given on its command line reach the app, and `stats`/`ls` read the cache the app
// wrote. Wine's OpenCL.dll forwards to the host's real PoCL (its own kernel cache off).
//
// Each wine run costs seconds, so the suite makes its runs once (SetUpTestSuite: a plain run, a
// cold and a warm `run`, then `stats` and `ls`) and the tests assert on what they left.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "wine_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

struct ToolRun {
  RunResult result;
  std::vector<nlohmann::json> traces;
  std::map<std::string, int> verdicts;
};

class WineTool : public ::testing::Test {
 protected:
  struct Runs {
    TempDir tmp;
    fs::path cache = tmp / "cache";
    RunResult plain, stats, ls;
    ToolRun cold, warm;
  };
  static inline std::unique_ptr<Runs> runs;

  // jitcache.exe run with the settings as options: nothing JITCACHE_* is in Wine's environment
  // (wine_support.hpp removes it), so a cached run proves the options reached the app.
  static ToolRun run_with_tool(const fs::path& trace_dir) {
    std::vector<std::string> argv = {JITCACHE_TOOL,         "run",  "--dir", runs->cache.string(), "--trace",
                                     "--trace-dir", trace_dir.string(), "--"};
    for (const std::string& argument : example(OPENCL_EXAMPLE_EXE)) argv.push_back(argument);
    ToolRun tool;
    tool.result = wine(argv);
    tool.traces = read_traces(trace_dir);
    tool.verdicts = count_verdicts(tool.traces);
    return tool;
  }

  static void SetUpTestSuite() {
    runs = std::make_unique<Runs>();
    runs->plain = wine(example(OPENCL_EXAMPLE_EXE));
    runs->cold = run_with_tool(runs->tmp / "traces-cold");
    runs->warm = run_with_tool(runs->tmp / "traces-warm");
    // --dir before the command, as on Linux; JITCACHE_DIR reaches the tool itself the same way.
    runs->stats = wine({JITCACHE_TOOL, "--dir", runs->cache.string(), "stats", "--json"});
    runs->ls = wine({JITCACHE_TOOL, "ls", "--json"}, {{"JITCACHE_DIR", runs->cache.string()}});
  }

  static void TearDownTestSuite() { runs.reset(); }

  static nlohmann::json parsed(const RunResult& result) {
    nlohmann::json document = nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(document.is_discarded()) << result.out << result.err;
    return document;
  }
};

TEST_F(WineTool, RunMissesThenHitsWithTheResultsOfAnUncachedRun) {
  ASSERT_EQ(runs->plain.exit_code, 0) << runs->plain.err;
  ASSERT_NE(runs->plain.out.find("all results correct"), std::string::npos) << runs->plain.out;

  const ToolRun& cold = runs->cold;
  ASSERT_EQ(cold.result.exit_code, 0) << cold.result.err;
  EXPECT_EQ(cold.result.out, runs->plain.out);
  EXPECT_EQ(cold.verdicts.at("miss"), 2) << cold.result.err;
  EXPECT_EQ(cold.verdicts.count("hit"), 0u);

  const ToolRun& warm = runs->warm;
  ASSERT_EQ(warm.result.exit_code, 0) << warm.result.err;
  EXPECT_EQ(warm.result.out, runs->plain.out);
  EXPECT_EQ(warm.verdicts.at("hit"), 2) << warm.result.err;
  EXPECT_EQ(warm.verdicts.count("miss"), 0u);
  for (const nlohmann::json& trace : warm.traces) {
    EXPECT_NE(trace.value("process", "").find("opencl_example.exe"), std::string::npos) << "not the Windows app";
  }
}

TEST_F(WineTool, StatsCountsTheRunsLookups) {
  ASSERT_EQ(runs->stats.exit_code, 0) << runs->stats.err;
  const nlohmann::json stats = parsed(runs->stats);
  const nlohmann::json& counters = stats["counters"];
  EXPECT_EQ(counters.value("misses", -1), 2) << stats.dump(2);
  EXPECT_EQ(counters.value("stores", -1), 2) << stats.dump(2);
  EXPECT_EQ(counters.value("hits_disk", -1), 2) << stats.dump(2);  // the warm run is a new process
  EXPECT_EQ(stats.value("hits", -1), 2) << stats.dump(2);
  EXPECT_EQ(stats["store"].value("entries", -1), 2) << stats.dump(2);
}

TEST_F(WineTool, LsListsTheEntriesUnderTheKeysTheTracesName) {
  ASSERT_EQ(runs->ls.exit_code, 0) << runs->ls.err;
  const nlohmann::json ls = parsed(runs->ls);
  ASSERT_TRUE(ls["entries"].is_array()) << ls.dump(2);
  std::vector<std::string> listed;
  for (const nlohmann::json& entry : ls["entries"]) listed.push_back(entry.value("key", ""));
  std::vector<std::string> traced;
  for (const nlohmann::json& trace : runs->cold.traces) traced.push_back(trace.value("key", ""));
  std::sort(listed.begin(), listed.end());
  std::sort(traced.begin(), traced.end());
  EXPECT_EQ(listed, traced);
  EXPECT_EQ(listed.size(), 2u);
}

TEST_F(WineTool, RunReturnsTheAppsExitCode) {
  // A missing kernel dir makes the example fail with exit code 1, injected or not.
  RunResult result = wine({JITCACHE_TOOL, "run", "--dir", runs->cache.string(), "--", OPENCL_EXAMPLE_EXE,
                           "--kernels", (runs->tmp / "none").string()});
  EXPECT_EQ(result.exit_code, 1) << result.err;
}

TEST_F(WineTool, RunWithoutTheDllIsAToolFailure) {
  RunResult result = wine({JITCACHE_TOOL, "run", "--", OPENCL_EXAMPLE_EXE},
                          {{"JITCACHE_DLL", (runs->tmp / "missing" / "jitcache.dll").string()}});
  EXPECT_EQ(result.exit_code, 125) << result.err;
  EXPECT_NE(result.err.find("JITCACHE_DLL="), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");  // the app never ran
}

}  // namespace
}  // namespace jitcache::testing
