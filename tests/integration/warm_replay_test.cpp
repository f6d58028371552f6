// `jitcache warm` on real PoCL through the real ICD loader, after a driver upgrade simulated for
// real (pocl_upgrade.hpp).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "pocl_upgrade.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

class WarmReplay : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path kernels = tmp / "kernels";
  int runs = 0;

  void SetUp() override {
    if (!pocl_layout_present()) GTEST_SKIP() << "needs Debian's PoCL layout";
    copy_sources(EXAMPLE_KERNELS, kernels);
  }

  // An "upgraded" PoCL: the same code at a new path, found through OCL_ICD_VENDORS.
  std::map<std::string, std::string> upgraded_driver() { return upgraded_pocl(tmp.path()); }

  std::map<std::string, std::string> base_env(std::map<std::string, std::string> extra = {}) const {
    std::map<std::string, std::string> env = {{"JITCACHE_DIR", cache.string()}, {"POCL_KERNEL_CACHE", "0"}};
    for (auto& [name, value] : extra) env[name] = value;
    return env;
  }

  CachedRun run_app(std::vector<std::string> argv, std::map<std::string, std::string> extra = {}) {
    fs::path trace_dir = tmp / ("traces-" + std::to_string(++runs));
    RunOptions options;
    options.env = base_env(std::move(extra));
    options.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    options.env["JITCACHE_TRACE"] = "1";
    options.env["JITCACHE_TRACE_DIR"] = trace_dir.string();
    return run_traced(argv, options, trace_dir);
  }

  std::vector<std::string> example() const { return {OPENCL_EXAMPLE, "--kernels", kernels.string()}; }

  nlohmann::json warm(std::map<std::string, std::string> extra = {}, std::vector<std::string> args = {}) {
    RunOptions options;
    options.env = base_env(std::move(extra));
    options.unset = {"LD_PRELOAD"};
    std::vector<std::string> argv = {JITCACHE_TOOL, "warm", "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult result = run(argv, options);
    nlohmann::json report = nlohmann::json::parse(result.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << result.out << result.err;
    return report;
  }
};

void expect_success(const RunResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("all results correct"), std::string::npos) << result.out;
}

// Every byte of every regular file under `root`, searched for `needle`.
bool any_file_contains(const fs::path& root, const std::string& needle) {
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST_F(WarmReplay, AfterADriverUpgradeWarmMakesTheNextRunAllHits) {
  CachedRun first = run_app(example());
  expect_success(first.result);
  ASSERT_EQ(first.verdicts["miss"], 2);

  const auto upgrade = upgraded_driver();
  nlohmann::json report = warm(upgrade);
  EXPECT_EQ(report["programs"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 2) << report.dump(2);
  EXPECT_EQ(report["failed"], 0) << report.dump(2);

  CachedRun after = run_app(example(), upgrade);
  expect_success(after.result);
  EXPECT_EQ(after.result.out, first.result.out);
  EXPECT_EQ(after.verdicts["hit"], 2) << after.result.err;
  EXPECT_EQ(after.traces.size(), 2u);

  report = warm(upgrade);  // nothing left to do
  EXPECT_EQ(report["already_warm"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 0);
}

// What warm stores every app will load, so a warm replay loads its binary back before storing it,
// as a capture helper does (shim/opencl/load_back.hpp). Bytes the driver cannot load
// (JITCACHE_TEST_REPLAY_BREAKS_BINARY inverts their first 16 bytes, PoCL's header, between the read
// and the check; read only in a replay child) are not stored: warm reports each program failed
// with the reason, in --json and in its text, exits 1, and counts warm_unloadable. Nothing stored
// means the next warm rebuilds them (its check passes: load_check > 0 in its traces), and the app
// is then all hits, none stale.
TEST_F(WarmReplay, ARebuiltBinaryThatDoesNotLoadBackIsNotStoredAndReportedFailed) {
  CachedRun first = run_app(example());
  expect_success(first.result);
  ASSERT_EQ(first.verdicts["miss"], 2);
  ASSERT_EQ(entry_files(cache).size(), 2u);  // the old driver's

  const auto upgrade = upgraded_driver();
  auto broken = upgrade;
  broken["JITCACHE_TEST_REPLAY_BREAKS_BINARY"] = "1";
  broken["JITCACHE_TRACE"] = "1";
  broken["JITCACHE_TRACE_DIR"] = (tmp / "traces-broken-warm").string();
  nlohmann::json report = warm(broken);
  EXPECT_EQ(report["programs"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 0) << report.dump(2);
  ASSERT_EQ(report["failed"], 2) << report.dump(2);
  for (const auto& row : report["results"]) {
    EXPECT_EQ(row["outcome"], "failed") << row.dump();
    EXPECT_EQ(row["reason"].get<std::string>().rfind("built, but its binary did not load back: ", 0), 0u) << row.dump();
  }
  EXPECT_EQ(entry_files(cache).size(), 2u) << "warm stored a binary that did not load back";
  EXPECT_EQ(stats_counter(JITCACHE_TOOL, cache, "warm_unloadable"), 2);
  EXPECT_EQ(stats_counter(JITCACHE_TOOL, cache, "capture_helper_unloadable"), 0);
  std::vector<nlohmann::json> traces = read_traces(tmp / "traces-broken-warm");
  ASSERT_EQ(traces.size(), 2u);
  for (const auto& trace : traces) {
    EXPECT_EQ(trace.value("verdict", ""), "failed") << trace.dump();
    EXPECT_FALSE(trace.contains("capture_helper")) << "a warm replay is not a capture helper";
  }

  RunOptions text_options;
  text_options.env = base_env(broken);
  text_options.unset = {"LD_PRELOAD"};
  RunResult text = run({JITCACHE_TOOL, "warm"}, text_options);
  EXPECT_EQ(text.exit_code, 1) << text.out << text.err;
  EXPECT_NE(text.out.find("2 recorded program(s): 0 built, 0 already warm, 0 for devices not here, 2 failed"),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find(": built, but its binary did not load back: "), std::string::npos) << text.out;

  auto traced = upgrade;
  traced["JITCACHE_TRACE"] = "1";
  traced["JITCACHE_TRACE_DIR"] = (tmp / "traces-warm").string();
  report = warm(traced);
  EXPECT_EQ(report["built"], 2) << report.dump(2);
  EXPECT_EQ(report["failed"], 0) << report.dump(2);
  traces = read_traces(tmp / "traces-warm");
  ASSERT_EQ(traces.size(), 2u);
  for (const auto& trace : traces) EXPECT_GT(trace["timings_us"].value("load_check", 0), 0) << trace.dump();
  CachedRun after = run_app(example(), upgrade);
  expect_success(after.result);
  EXPECT_EQ(after.verdicts["hit"], 2) << after.result.err;
  EXPECT_EQ(stats_counter(JITCACHE_TOOL, cache, "stale_rejected"), 0);
}

TEST_F(WarmReplay, WithoutAnUpgradeEverythingIsAlreadyWarm) {
  expect_success(run_app(example()).result);
  nlohmann::json report = warm();
  EXPECT_EQ(report["already_warm"], 2) << report.dump(2);
  EXPECT_EQ(report["failed"], 0);
}

TEST_F(WarmReplay, AHeaderEditedSinceTheRecordFailsThatProgramWithTheReason) {
  expect_success(run_app(example()).result);
  write_text(kernels / "common.h", read_text(kernels / "common.h") + "\n#define EDITED 1\n");
  nlohmann::json report = warm(upgraded_driver());
  EXPECT_EQ(report["built"], 1) << report.dump(2);  // the program without the header
  ASSERT_EQ(report["failed"], 1) << report.dump(2);
  for (const auto& row : report["results"]) {
    if (row["outcome"] != "failed") continue;
    EXPECT_NE(row["reason"].get<std::string>().find("headers"), std::string::npos) << row.dump();
    EXPECT_NE(row["reason"].get<std::string>().find("common.h changed"), std::string::npos) << row.dump();
  }
}

TEST_F(WarmReplay, StoreInputsOffKeepsNoSourceByteOnDisk) {
  const std::string kernel_line = "inline float transform(float x)";  // from common.h
  ASSERT_NE(read_text(kernels / "common.h").find(kernel_line), std::string::npos);

  CachedRun off = run_app(example(), {{"JITCACHE_STORE_INPUTS", "0"}});
  expect_success(off.result);
  ASSERT_EQ(off.verdicts["miss"], 2);
  EXPECT_FALSE(any_file_contains(cache, kernel_line));
  EXPECT_FALSE(any_file_contains(cache, "__kernel void square_plus_offset"));
  nlohmann::json report = warm(upgraded_driver());
  EXPECT_EQ(report["programs"], 0) << report.dump(2);
  EXPECT_EQ(report["not_replayable"].size(), 2u);

  // The same search finds them when inputs are kept: the check above is not vacuous.
  fs::remove_all(cache);
  expect_success(run_app(example()).result);
  EXPECT_TRUE(any_file_contains(cache, kernel_line));
}

TEST_F(WarmReplay, PyOpenClProgramsAreWarmedToo) {
  if (RunResult probe = run({"/usr/bin/python3", "-c", "import pyopencl"}); probe.exit_code != 0) {
    GTEST_SKIP() << "python3-pyopencl not installed";
  }
  std::vector<std::string> script = {"/usr/bin/python3", PYOPENCL_SCRIPT};
  std::map<std::string, std::string> env = {{"PYOPENCL_NO_CACHE", "1"}, {"PYOPENCL_CTX", "0"}};
  CachedRun first = run_app(script, env);
  ASSERT_EQ(first.result.exit_code, 0) << first.result.err;
  ASSERT_EQ(first.verdicts["miss"], 2);
  auto upgrade = upgraded_driver();
  nlohmann::json report = warm(upgrade);
  EXPECT_EQ(report["built"], 2) << report.dump(2);
  for (auto& [name, value] : env) upgrade[name] = value;
  CachedRun after = run_app(script, upgrade);
  EXPECT_EQ(after.result.out, first.result.out);
  EXPECT_EQ(after.verdicts["hit"], 2) << after.result.err;
}

// A vendor's pack that carries its recorded inputs, on a machine whose driver is not the one its
// binaries were built by: `jitcache warm --pack` rebuilds its programs into an empty store and the
// app is all hits. A stripped pack carries no inputs, and warm says so and fails.
TEST_F(WarmReplay, APackWithInputsIsWarmedIntoAnEmptyStoreAfterADriverUpgrade) {
  CachedRun first = run_app(example());
  expect_success(first.result);
  ASSERT_EQ(first.verdicts["miss"], 2);
  auto tool = [&](std::vector<std::string> args, int expected_exit = 0) {
    RunOptions options;
    options.env = base_env();
    options.unset = {"LD_PRELOAD", "JITCACHE_PACKS"};
    args.insert(args.begin(), JITCACHE_TOOL);
    args.push_back("--json");
    RunResult result = run(args, options);
    EXPECT_EQ(result.exit_code, expected_exit) << result.out << result.err;
    return nlohmann::json::parse(result.out, nullptr, false);
  };
  const fs::path packs = tmp / "packs";  // a folder of its own: packs in /tmp itself are refused
  fs::create_directories(packs);
  const fs::path pack = packs / "app.jcpack", stripped = packs / "stripped.jcpack";
  EXPECT_EQ(tool({"pack", "create", "-o", pack.string()})["input_records"], 2);
  EXPECT_EQ(tool({"pack", "ls", pack.string()})["inputs"].size(), 2u);
  const nlohmann::json verified = tool({"pack", "verify", pack.string()})["packs"][0];
  EXPECT_EQ(verified["ok"], true) << verified.dump(2);
  EXPECT_EQ(verified["input_records"], 2);
  EXPECT_EQ(verified["inputs_missing"], 0);

  // The user's machine: nothing in its store, and a driver the pack's binaries do not match.
  auto user = upgraded_driver();
  user["JITCACHE_DIR"] = (tmp / "user-cache").string();
  CachedRun stale = run_app(example(), {{"JITCACHE_DIR", (tmp / "probe-cache").string()},
                                        {"JITCACHE_PACKS", pack.string()},
                                        {"OCL_ICD_VENDORS", user["OCL_ICD_VENDORS"]}});
  EXPECT_EQ(stale.verdicts["miss"], 2) << "the pack's binaries must not match the upgraded driver";
  nlohmann::json report = warm(user, {"--pack", pack.string()});
  EXPECT_EQ(report["programs"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 2) << report.dump(2);
  EXPECT_EQ(report["failed"], 0) << report.dump(2);
  CachedRun after = run_app(example(), user);
  expect_success(after.result);
  EXPECT_EQ(after.result.out, first.result.out);
  EXPECT_EQ(after.verdicts["hit"], 2) << after.result.err;
  EXPECT_EQ(after.traces.size(), 2u);

  tool({"pack", "strip", pack.string(), "-o", stripped.string()});
  EXPECT_TRUE(tool({"pack", "ls", stripped.string()})["inputs"].empty());
  // merge: the union of the records (the stripped pack adds none; the first pack's sidecar of a key
  // is kept, so the full pack comes first); import: into the store, from
  // where a plain `jitcache warm` rebuilds them.
  const fs::path merged = packs / "merged.jcpack";
  EXPECT_EQ(tool({"pack", "merge", pack.string(), stripped.string(), "-o", merged.string()})["input_records"], 2);
  auto imported = user;
  imported["JITCACHE_DIR"] = (tmp / "imported-cache").string();
  RunOptions import_options;
  import_options.env = base_env(imported);
  import_options.unset = {"LD_PRELOAD"};
  RunResult import = run({JITCACHE_TOOL, "pack", "import", merged.string(), "--json"}, import_options);
  ASSERT_EQ(import.exit_code, 0) << import.err;
  EXPECT_EQ(nlohmann::json::parse(import.out, nullptr, false)["inputs_imported"], 2) << import.out;
  EXPECT_EQ(warm(imported)["built"], 2);
  RunOptions options;
  options.env = base_env(user);
  options.env["JITCACHE_DIR"] = (tmp / "stripped-cache").string();
  options.unset = {"LD_PRELOAD"};
  RunResult refused = run({JITCACHE_TOOL, "warm", "--pack", stripped.string()}, options);
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.out.find(stripped.string() + " carries no recorded inputs"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("0 recorded program(s)"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("2 entries or records not replayable"), std::string::npos) << refused.out;
}

}  // namespace
}  // namespace jitcache::testing
