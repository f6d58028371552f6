// `jitcache warm` on real PoCL through the real ICD loader. A driver upgrade is simulated for real:
// the PoCL library is copied into a fresh prefix (its device and include folders linked back) and
// OCL_ICD_VENDORS points the loader at the copy, so the compiler identity the key sees (the vendor
// library's path) changes and every recorded entry is stale for it.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kPoclLibrary = "/usr/lib/x86_64-linux-gnu/libpocl.so.2";
const fs::path kPoclDevices = "/usr/lib/x86_64-linux-gnu/pocl";
const fs::path kPoclShare = "/usr/share/pocl";

class WarmReplay : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path kernels = tmp / "kernels";
  int runs = 0;

  void SetUp() override {
    if (!fs::exists(kPoclLibrary) || !fs::exists(kPoclDevices) || !fs::exists(kPoclShare)) {
      GTEST_SKIP() << "needs Debian's PoCL layout";
    }
    fs::copy(EXAMPLE_KERNELS, kernels, fs::copy_options::recursive);
  }

  // An "upgraded" PoCL: the same code at a new path, found through OCL_ICD_VENDORS.
  std::map<std::string, std::string> upgraded_driver() {
    const fs::path prefix = tmp / "upgraded";
    const fs::path lib = prefix / "lib" / "x86_64-linux-gnu";
    fs::create_directories(lib);
    fs::create_directories(prefix / "share");
    if (!fs::exists(lib / "libpocl.so.2")) {
      fs::copy_file(fs::canonical(kPoclLibrary), lib / "libpocl.so.2");
      fs::create_directory_symlink(kPoclDevices, lib / "pocl");           // PoCL finds its devices here
      fs::create_directory_symlink(kPoclShare, prefix / "share" / "pocl");  // and its headers here
      fs::create_directories(tmp / "vendors");
      write_text(tmp / "vendors" / "pocl.icd", (lib / "libpocl.so.2").string() + "\n");
    }
    return {{"OCL_ICD_VENDORS", (tmp / "vendors").string()}};
  }

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

}  // namespace
}  // namespace jitcache::testing
