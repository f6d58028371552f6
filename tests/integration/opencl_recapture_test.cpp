// recapture on real PoCL (cache off): an entry stored before the app used its program (here by
// capture = build, as by a capture helper) is rebuilt once by the next warm run and stored when the
// app is done with it, with the work-group code PoCL generated at its enqueues; the warm run after
// that generates none. Code generations are counted in PoCL's own log (POCL_DEBUG=llvm:
// one "pocl_llvm_codegen" line per work-group function compiled). Output always equals the plain run's.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "entry_files.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

int code_generations(const RunResult& result) {
  int count = 0;
  for (size_t at = result.err.find("pocl_llvm_codegen"); at != std::string::npos;
       at = result.err.find("pocl_llvm_codegen", at + 1)) {
    ++count;
  }
  return count;
}

// Every entry's binary, by file name.
std::map<std::string, std::string> entries(const fs::path& root) {
  std::map<std::string, std::string> binaries;
  for (const fs::path& file : entry_files(root)) binaries[file.filename().string()] = read_text(file);
  return binaries;
}

struct Runs {
  TempDir tmp;
  std::vector<std::string> argv;
  RunOptions options;
  int run_count = 0;
  std::string capture = "build";  // the cold run stores the binary read right after the build

  Runs(std::vector<std::string> app, std::map<std::string, std::string> env) : argv(std::move(app)) {
    env["POCL_KERNEL_CACHE"] = "0";
    env["POCL_DEBUG"] = "llvm";
    env["HOME"] = (tmp / "home").string();
    options.env = std::move(env);
    options.unset = {"LD_PRELOAD", "OPENCL_LAYERS", "JITCACHE_DIR", "JITCACHE_DISABLE", "JITCACHE_CAPTURE",
                     "JITCACHE_RECAPTURE", "JITCACHE_PACKS", "JITCACHE_REMOTE"};
    options.timeout_s = 600;
  }
  RunResult plain() { return run(argv, options); }
  CachedRun cached(const std::string& recapture = "auto") {
    RunOptions o = options;
    const fs::path traces = tmp / ("traces-" + std::to_string(++run_count));
    o.env["OPENCL_LAYERS"] = JITCACHE_LIBRARY;
    o.env["JITCACHE_DIR"] = cache().string();
    o.env["JITCACHE_TRACE"] = "1";
    o.env["JITCACHE_TRACE_DIR"] = traces.string();
    o.env["JITCACHE_CAPTURE"] = capture;
    o.env["JITCACHE_RECAPTURE"] = recapture;
    return run_traced(argv, o, traces);
  }
  fs::path cache() const { return tmp / "cache"; }
};

bool captured_after_use(const fs::path& entry_file) {
  return read_entry(entry_file).sidecar.value("captured_after_use", false);
}

std::vector<nlohmann::json> refreshes(const CachedRun& run) {
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& trace : run.traces) {
    if (trace.value("reason", "").rfind("refresh: ", 0) == 0) found.push_back(trace);
  }
  return found;
}

// cold, warm (refreshes every entry but compiled objects), warm again (generates no work-group
// code, rewrites nothing).
void expect_one_refresh_then_no_code(Runs& runs, const std::string& refreshed_kind) {
  RunResult plain = runs.plain();
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_GT(code_generations(plain), 0) << "PoCL's log changed: no code generation seen in the plain run";

  CachedRun cold = runs.cached();
  ASSERT_EQ(cold.result.exit_code, 0) << cold.result.err;
  EXPECT_EQ(cold.result.out, plain.out);
  EXPECT_GT(cold.verdicts["miss"], 0);
  EXPECT_TRUE(refreshes(cold).empty());
  const std::map<std::string, std::string> stored_cold = entries(runs.cache());

  CachedRun first_warm = runs.cached();
  ASSERT_EQ(first_warm.result.exit_code, 0) << first_warm.result.err;
  EXPECT_EQ(first_warm.result.out, plain.out);
  const std::vector<nlohmann::json> refreshed = refreshes(first_warm);
  ASSERT_FALSE(refreshed.empty()) << "the first warm run refreshed no entry";
  bool kind_refreshed = false;
  for (const nlohmann::json& trace : refreshed) {
    kind_refreshed = kind_refreshed || trace.value("kind", "") == refreshed_kind;
    EXPECT_EQ(trace.value("verdict", ""), "miss");
  }
  EXPECT_TRUE(kind_refreshed) << "no " << refreshed_kind << " entry refreshed";
  // Every other lookup hit (compiled objects are never refreshed).
  EXPECT_EQ(first_warm.verdicts["hit"] + static_cast<int>(refreshed.size()), static_cast<int>(first_warm.traces.size()));
  const nlohmann::json stats = nlohmann::json::parse(read_text(runs.cache() / "stats.json"));
  EXPECT_EQ(stats.value("entries_refreshed", 0), static_cast<int>(refreshed.size())) << stats.dump();

  const std::map<std::string, std::string> stored_warm = entries(runs.cache());
  ASSERT_EQ(stored_warm.size(), stored_cold.size());  // same keys: replaced in place, nothing added
  int grown = 0;
  for (const fs::path& binary : entry_files(runs.cache())) {
    const std::string name = binary.filename().string();
    ASSERT_TRUE(stored_cold.count(name)) << name;
    if (stored_warm.at(name) == stored_cold.at(name)) continue;  // not refreshed (a compiled object)
    EXPECT_TRUE(captured_after_use(binary)) << name;
    EXPECT_GE(stored_warm.at(name).size(), stored_cold.at(name).size()) << name << ": shrank";
    grown += stored_warm.at(name).size() > stored_cold.at(name).size();
  }
  std::set<std::string> refreshed_keys;  // a key may be refreshed twice (refresh_again)
  for (const nlohmann::json& trace : refreshed) refreshed_keys.insert(trace.value("key", ""));
  EXPECT_EQ(grown, static_cast<int>(refreshed_keys.size()));

  CachedRun second_warm = runs.cached();
  ASSERT_EQ(second_warm.result.exit_code, 0) << second_warm.result.err;
  EXPECT_EQ(second_warm.result.out, plain.out);
  EXPECT_EQ(second_warm.verdicts["hit"], static_cast<int>(second_warm.traces.size()));
  EXPECT_EQ(code_generations(second_warm.result), 0) << "work-group code generated again after the refresh";
  EXPECT_EQ(entries(runs.cache()), stored_warm);  // not rewritten
}

// clBuildProgram: pyopencl's array maths, reductions and a scan (the pyopencl client of bench/clients.sh):
// 14 code generations per warm run without recapture. pyopencl builds the first scan program object
// twice, and builds one scan program it releases before running it, then the same source again:
// both are covered (the two tests of binary_reader_app below).
TEST(Recapture, PyopenclWarmRunRefreshesAndTheNextGeneratesNoCode) {
  Runs runs({"/usr/bin/python3", PYOPENCL_EXIT_CAPTURE_APP}, {{"PYOPENCL_NO_CACHE", "1"}, {"PYOPENCL_CTX", "0"}});
  expect_one_refresh_then_no_code(runs, "source");
}

// An app that reads CL_PROGRAM_BINARIES right after the build (hashcat, CLBlast) gets the refreshed
// entry's earlier bytes while the program is parked: PoCL would pack its binary at that read, before
// the kernel ran, and hand those bytes back at release. The bytes it read load and run (the app's
// clCreateProgramWithBinary of them), and its output equals the plain run's.
TEST(Recapture, AppReadingTheBinaryAfterTheBuildStillGetsTheCodeGeneratedLater) {
  Runs runs({BINARY_READER_APP, "build"}, {});
  expect_one_refresh_then_no_code(runs, "source");
}

// The same for clCompileProgram + clLinkProgram (hashcat reads the linked program's binary).
TEST(Recapture, AppReadingTheLinkedBinaryAfterTheLinkStillGetsTheCodeGeneratedLater) {
  Runs runs({BINARY_READER_APP, "link"}, {});
  expect_one_refresh_then_no_code(runs, "linked");
}

// A program built, asked about (a kernel made, never run) and released, then the same source built
// as a new program and run (pyopencl's scan): the first refresh stores no new code, so the second
// build is refreshed too (entry_refresh.hpp, refresh_again) and its program stored after its run.
TEST(Recapture, ProgramReleasedBeforeItRanLeavesTheRefreshToTheNextBuildOfItsKey) {
  Runs runs({BINARY_READER_APP, "build-unused-first"}, {});
  expect_one_refresh_then_no_code(runs, "source");
}

// One program object built twice with the same inputs (pyopencl): the second build keeps the
// program parked instead of storing it before its kernel ran.
TEST(Recapture, ProgramBuiltTwiceStaysParkedUntilItsKernelsRan) {
  Runs runs({BINARY_READER_APP, "build-twice"}, {});
  expect_one_refresh_then_no_code(runs, "source");
}

// clCompileProgram + clLinkProgram (hashcat's way): the linked program served is refreshed.
TEST(Recapture, LinkedProgramWarmRunRefreshesAndTheNextGeneratesNoCode) {
  TempDir headers;
  write_text(headers / "params.h", "#define SCALE 5\n");
  Runs runs({COMPILE_LINK_APP, (headers / "params.h").string(), "5"}, {});
  expect_one_refresh_then_no_code(runs, "linked");
}

// recapture = 0: no entry is refreshed, and every warm run generates its work-group code again
// (what the two tests above look like without the feature).
TEST(Recapture, OffLeavesEntriesAsTheColdRunStoredThem) {
  TempDir headers;
  write_text(headers / "params.h", "#define SCALE 5\n");
  Runs runs({COMPILE_LINK_APP, (headers / "params.h").string(), "5"}, {});
  ASSERT_EQ(runs.cached("0").result.exit_code, 0);
  const std::map<std::string, std::string> stored_cold = entries(runs.cache());
  for (int i = 0; i < 2; ++i) {
    CachedRun warm = runs.cached("0");
    ASSERT_EQ(warm.result.exit_code, 0) << warm.result.err;
    EXPECT_EQ(warm.verdicts["hit"], static_cast<int>(warm.traces.size()));
    EXPECT_GT(code_generations(warm.result), 0);
  }
  EXPECT_EQ(entries(runs.cache()), stored_cold);
}

// capture = release parks a linked program like a built one (before: compiles and links were
// stored at once, without the code generated at the first enqueue, so hashcat gained nothing).
TEST(CaptureAtRelease, LinkedProgramIsStoredAfterUseAndTheWarmRunGeneratesNoCode) {
  TempDir headers;
  write_text(headers / "params.h", "#define SCALE 5\n");
  Runs runs({COMPILE_LINK_APP, (headers / "params.h").string(), "5"}, {});
  runs.capture = "release";
  RunResult plain = runs.plain();
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  CachedRun cold = runs.cached("0");
  ASSERT_EQ(cold.result.exit_code, 0) << cold.result.err;
  EXPECT_EQ(cold.count("linked", "miss"), 1);
  int marked = 0;
  for (const fs::path& binary : entry_files(runs.cache())) marked += captured_after_use(binary);
  EXPECT_EQ(marked, 1);  // the linked program; the compiled objects are stored at once
  CachedRun warm = runs.cached("0");
  ASSERT_EQ(warm.result.exit_code, 0) << warm.result.err;
  EXPECT_EQ(warm.result.out, plain.out);
  EXPECT_EQ(warm.verdicts["hit"], static_cast<int>(warm.traces.size()));
  EXPECT_EQ(code_generations(warm.result), 0);
}

// An app whose own cache is warm (hashcat, OpenCV, pyopencl with theirs on) makes its programs from
// binaries only: the shim keys none of them, so the cache must not even start (no settings read,
// no store opened or created, no compiler identity): the app runs as fast as without jitcache.
TEST(Recapture, ProgramsMadeOnlyFromBinariesDoNotStartTheCache) {
  TempDir saved_dir;
  const std::string saved = (saved_dir / "app-cache.bin").string();
  Runs runs({BINARY_READER_APP, "from-file", saved}, {});
  RunResult filling = runs.plain();  // builds the source and saves the binary: the app's cache
  ASSERT_EQ(filling.exit_code, 0) << filling.err;
  ASSERT_TRUE(fs::exists(saved));
  RunResult plain = runs.plain();  // from the binary
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_NE(plain.out.find("from-file: sum="), std::string::npos) << plain.out;
  CachedRun cached = runs.cached();
  ASSERT_EQ(cached.result.exit_code, 0) << cached.result.err;
  EXPECT_EQ(cached.result.out, plain.out);
  EXPECT_TRUE(cached.traces.empty());
  EXPECT_FALSE(fs::exists(runs.cache())) << "the cache started for a program made from a binary";
}

}  // namespace
}  // namespace jitcache::testing
