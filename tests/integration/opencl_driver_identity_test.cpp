// Issue 28 item 9: the compiler identity of a build is its driver's. The ICD loader loads every
// registered driver into the app; another driver's libraries (Mesa's rusticl brings
// libLLVMSPIRVLib) must not change PoCL's keys, so installing or removing an unrelated driver
// leaves every entry a hit. Real PoCL and rusticl (llvmpipe) through the real ICD loader.
#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kVendors = JITCACHE_TEST_VENDORS;

class DriverIdentity : public ::testing::Test {
 protected:
  TempDir tmp;
  int runs = 0;

  CachedRun example(const fs::path& cache, const std::string& vendors, std::map<std::string, std::string> env = {}) {
    const fs::path traces = tmp / ("traces-" + std::to_string(++runs));
    RunOptions options;
    options.env = std::move(env);
    options.env["OCL_ICD_VENDORS"] = (kVendors / vendors).string();
    options.env["JITCACHE_DIR"] = cache.string();
    options.env["JITCACHE_TRACE"] = "1";
    options.env["JITCACHE_TRACE_DIR"] = traces.string();
    options.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    options.unset = {"OPENCL_LAYERS", "RUSTICL_ENABLE", "CL_APP_PLATFORM"};
    return run_traced({OPENCL_EXAMPLE, "--kernels", EXAMPLE_KERNELS}, options, traces);
  }
};

std::set<std::string> keys(const CachedRun& run) {
  std::set<std::string> keys;
  for (const nlohmann::json& trace : run.traces) keys.insert(trace.value("key", std::string()));
  return keys;
}

// The file names of the libraries in the compiler identity of every trace of the run.
std::set<std::string> compiler_libraries(const CachedRun& run) {
  std::set<std::string> names;
  for (const nlohmann::json& trace : run.traces) {
    for (const nlohmann::json& library : trace["components"]["compiler"]["value"]["libraries"]) {
      names.insert(fs::path(library.value("path", std::string())).filename().string());
    }
  }
  return names;
}

bool any_starts_with(const std::set<std::string>& names, const std::string& prefix) {
  for (const std::string& name : names) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string joined(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += name + " ";
  return text;
}

// Mesa installed beside PoCL (its rusticl.icd registered, RUSTICL_ENABLE unset as on most
// machines: rusticl offers no device but is loaded), then removed again: PoCL's keys never move.
TEST_F(DriverIdentity, InstallingAnotherDriverLeavesPoclsKeysUnchanged) {
  const fs::path cache = tmp / "cache";
  CachedRun alone = example(cache, "pocl");
  ASSERT_EQ(alone.result.exit_code, 0) << alone.result.err;
  ASSERT_GT(alone.verdicts["miss"], 0);
  const std::set<std::string> pocl_libraries = compiler_libraries(alone);
  EXPECT_TRUE(any_starts_with(pocl_libraries, "libpocl.so")) << joined(pocl_libraries);

  CachedRun beside = example(cache, "pocl-rusticl");
  ASSERT_EQ(beside.result.exit_code, 0) << beside.result.err;
  EXPECT_EQ(keys(beside), keys(alone));
  EXPECT_EQ(beside.verdicts["hit"], static_cast<int>(beside.traces.size())) << beside.verdicts["miss"] << " misses";
  EXPECT_EQ(compiler_libraries(beside), pocl_libraries) << "rusticl's libraries are in PoCL's identity";

  CachedRun removed = example(cache, "pocl");
  ASSERT_EQ(removed.result.exit_code, 0) << removed.result.err;
  EXPECT_EQ(removed.verdicts["hit"], static_cast<int>(removed.traces.size())) << removed.verdicts["miss"] << " misses";
}

// rusticl's builds are keyed by rusticl's libraries (its LLVM, SPIR-V translator), not PoCL's,
// whether PoCL is registered beside it or not.
TEST_F(DriverIdentity, RusticlsKeysNameRusticlsLibrariesWhateverElseIsLoaded) {
  const fs::path cache = tmp / "cache";
  const std::map<std::string, std::string> rusticl = {{"RUSTICL_ENABLE", "llvmpipe"}, {"CL_APP_PLATFORM", "rusticl"}};
  CachedRun alone = example(cache, "rusticl", rusticl);
  ASSERT_EQ(alone.result.exit_code, 0) << alone.result.err;
  ASSERT_GT(alone.verdicts["miss"], 0);
  const std::set<std::string> libraries = compiler_libraries(alone);
  EXPECT_TRUE(any_starts_with(libraries, "libRusticlOpenCL.so")) << joined(libraries);
  EXPECT_TRUE(any_starts_with(libraries, "libLLVMSPIRVLib.so")) << joined(libraries);
  EXPECT_FALSE(any_starts_with(libraries, "libpocl")) << joined(libraries);

  CachedRun beside = example(cache, "pocl-rusticl", rusticl);
  ASSERT_EQ(beside.result.exit_code, 0) << beside.result.err;
  EXPECT_EQ(keys(beside), keys(alone));
  EXPECT_EQ(compiler_libraries(beside), libraries) << "PoCL's libraries are in rusticl's identity";
  EXPECT_EQ(beside.verdicts["hit"], static_cast<int>(beside.traces.size())) << beside.verdicts["miss"] << " misses";
}

}  // namespace
}  // namespace jitcache::testing
