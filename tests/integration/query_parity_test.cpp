// Issue 20: a served program answers every query exactly as the app's own build would. Apps in
// tests/integration/query_parity print every program, build, kernel, argument and work-group
// query's answer for a corpus; a run without jitcache, a cold run and a warm run must print the
// same, but for the known differences listed in kKnownDifferences (the one place, with reasons).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "entry_files.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

// What may differ between a run without jitcache and a cached run: matches of `pattern` are
// replaced by `stands_for` in every run's output before the comparison.
struct KnownDifference {
  std::regex pattern;
  const char* stands_for;
  const char* reason;
  std::regex section = std::regex("");  // only in the programs ("== <label>") this matches
};

// The only answers allowed to differ, and why. Nothing else may.
const std::vector<KnownDifference>& known_differences() {
  static const std::vector<KnownDifference> list = {
      {std::regex("fnv1a [0-9a-f]+"), "fnv1a (bytes vary)",
       "PoCL's binary bytes differ from compile to compile of the same program (two runs without jitcache "
       "differ too); their sizes are compared"},
      {std::regex("[^ \"]*/tempfile_[A-Za-z0-9]+\\.cl"), "<PoCL's temporary source file>",
       "PoCL's warnings name the temporary file it compiled, a new random name in every run (with or without "
       "jitcache); a warm run answers the log of the build that made the entry"},
      {std::regex("(CL_PROGRAM_BINARY_SIZES: size [0-9]+ = |CL_PROGRAM_BINARIES\\[[0-9]+\\]: )[0-9]+"),
       "$1(size varies)",
       "PoCL's binary of a second identical build in one process is larger than the first's (it carries more of "
       "PoCL's generated code); the cache serves the first build's binary, a valid binary of the same program",
       std::regex("^== attributes again$")},
      {std::regex("(CL_PROGRAM_BUILD_LOG: size )[0-9]+"), "$1(size varies with the path)",
       "the log names PoCL's temporary source file below POCL_CACHE_DIR: a capture helper's private folder's "
       "path is longer than the app's; the log's text is compared with the path masked (above)"},
      {std::regex("(CL_PROGRAM_BINARIES\\[[0-9]+\\]: )[0-9]+"), "$1(size varies)",
       "a served compiled object answers PoCL's own re-serialization of the loaded object, whose encoding "
       "depends on what the process loaded before (after the helper-built programs of a warm run: 24 bytes less "
       "than after the app's own); the stored object is the app's own",
       std::regex("^== compiled ")},
  };
  return list;
}

// rusticl (Mesa 22.3, llvmpipe) only: its quirks in shim/opencl/driver_quirks.hpp, each a known
// difference here until jitcache works around it (docs/reliability.md, "Driver quirks"); the
// kernel order is compared as a set (kernels_in_name_order).
const std::vector<KnownDifference>& rusticl_differences() {
  static const std::vector<KnownDifference> list = {
      {std::regex("(CL_PROGRAM_BUILD_OPTIONS: size )[0-9]+ = .*"), "$1(the app's options, or none on a hit)",
       "rusticl-binary-build-options: a program rusticl built from a binary answers \"\" whatever options its "
       "clBuildProgram had; a hit's shadow is such a program"},
  };
  return list;
}

// rusticl-kernel-order: a program rusticl loads from a binary lists its kernels in an order of its
// own, new in every process (a hash map's); the app's loop over CL_PROGRAM_KERNEL_NAMES then meets
// the same kernels in another order. Compared as sets: the names sorted, each program's kernel
// blocks ("kernel <name>: ..." and the lines below it) sorted by name.
std::vector<std::string> kernels_in_name_order(const std::vector<std::string>& lines) {
  static const std::regex names("^(CL_PROGRAM_KERNEL_NAMES: size [0-9]+ = \")([^\"]*)(\".*)$");
  std::vector<std::string> result;
  std::vector<std::vector<std::string>> blocks;
  auto flush = [&] {
    std::sort(blocks.begin(), blocks.end());
    for (const auto& block : blocks) result.insert(result.end(), block.begin(), block.end());
    blocks.clear();
  };
  for (std::string line : lines) {
    std::smatch m;
    if (std::regex_match(line, m, names)) {
      std::vector<std::string> list;
      std::istringstream in(m[2].str());
      for (std::string name; std::getline(in, name, ';');) list.push_back(name);
      std::sort(list.begin(), list.end());
      std::string sorted;
      for (const std::string& name : list) sorted += (sorted.empty() ? "" : ";") + name;
      line = m[1].str() + sorted + m[3].str();
    }
    if (line.rfind("kernel ", 0) == 0) {
      blocks.push_back({line});
    } else if (!blocks.empty() && line.rfind("  ", 0) == 0) {
      blocks.back().push_back(line);
    } else {
      flush();
      result.push_back(line);
    }
  }
  flush();
  return result;
}

std::vector<std::string> compared_lines(const std::string& out, bool rusticl = false) {
  std::vector<KnownDifference> applied = known_differences();
  if (rusticl) applied.insert(applied.end(), rusticl_differences().begin(), rusticl_differences().end());
  std::vector<std::string> lines;
  std::istringstream in(out);
  std::string section;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0) section = line;
    for (const KnownDifference& difference : applied) {
      if (std::regex_search(section, difference.section)) {
        line = std::regex_replace(line, difference.pattern, difference.stands_for);
      }
    }
    lines.push_back(line);
  }
  return rusticl ? kernels_in_name_order(lines) : lines;
}

// A binary size answer ("CL_PROGRAM_BINARY_SIZES: size 0 = 49397", "CL_PROGRAM_BINARIES[0]: 49397 ..."):
// what precedes the size, and the size.
const std::regex& size_answer() {
  static const std::regex pattern("^(.*(?:CL_PROGRAM_BINARY_SIZES: size [0-9]+ = |CL_PROGRAM_BINARIES\\[[0-9]+\\]: ))([0-9]+)(.*)$");
  return pattern;
}

// Whether `left` and `right` are the same size answer but for a size that is a helper-built entry's.
// A capture helper's PoCL binary is not byte for byte the app's own, for two reasons the build's
// inputs do not decide (docs/decisions/capture.md, "What a helper builds is what the app builds"):
// PoCL names its temporary source file (below POCL_CACHE_DIR: the app's folder, the helper's
// private one, of another length) in the bitcode, and a program that is not its process's first
// compile is encoded larger (the same IR; a helper compiles each program first).
// The served answer must then be exactly the stored entry's size.
bool helper_built_size(const std::string& left, const std::string& right, const std::set<std::string>& helper_sizes) {
  std::smatch l, r;
  return std::regex_match(left, l, size_answer()) && std::regex_match(right, r, size_answer()) && l[1] == r[1] &&
         l[3] == r[3] && helper_sizes.count(r[2].str()) > 0;
}

// Every differing line, with the one before it that names the program or kernel.
std::string differences(const std::string& expected, const std::string& actual,
                        const std::set<std::string>& helper_sizes = {}, bool rusticl = false) {
  std::vector<std::string> a = compared_lines(expected, rusticl), b = compared_lines(actual, rusticl);
  std::string report;
  std::string section;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string left = i < a.size() ? a[i] : "(missing)", right = i < b.size() ? b[i] : "(missing)";
    if (left.rfind("== ", 0) == 0 || left.rfind("kernel ", 0) == 0) section = left;
    if (left != right && !helper_built_size(left, right, helper_sizes)) {
      report += "[" + section + "]\n  expected: " + left + "\n  actual:   " + right + "\n";
    }
  }
  return report;
}

// The warning of an entry dropped after it served a hit (Engine::refuse_served).
constexpr const char* kDroppedAfterServed = "dropped after it was served";

size_t occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

// The first line of `text` that starts with `prefix` (empty: none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return {};
}

// "kind verdict (reason)" of every trace, for failure messages.
std::string kinds(const CachedRun& run) {
  std::string text;
  for (const nlohmann::json& trace : run.traces) {
    text += trace.value("kind", std::string("?")) + " " + trace.value("verdict", std::string("?")) + " (" +
            trace.value("reason", std::string()) + ")\n";
  }
  return text;
}

class QueryParity : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  int runs = 0;

  RunOptions options(const std::map<std::string, std::string>& extra, bool cached) {
    RunOptions run_options;
    // The default capture (a helper on PoCL): a helper-built entry's binary size may differ from
    // the app's own (helper_built_size); CaptureHelper.AHelperBuildsTheBinaryTheAppsFirstBuildIs
    // shows by how much and why.
    run_options.env = {{"POCL_KERNEL_CACHE", "0"}};
    run_options.unset = {"LD_PRELOAD", "OPENCL_LAYERS"};
    if (cached) {
      run_options.env["JITCACHE_DIR"] = cache.string();
      run_options.env["JITCACHE_TRACE"] = "1";
      run_options.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    }
    for (const auto& [name, value] : extra) run_options.env[name] = value;
    return run_options;
  }

  // The binary sizes of the entries a capture helper stored (their sidecar's created_by is the tool).
  std::set<std::string> helper_sizes() {
    std::set<std::string> sizes;
    for (const fs::path& file : entry_files(cache)) {
      const nlohmann::json meta = read_entry(file).sidecar;
      if (meta.is_object() && fs::path(meta.value("created_by", "")).filename() == "jitcache") {
        sizes.insert(std::to_string(meta.value("binary_size", std::uint64_t{0})));
      }
    }
    return sizes;
  }

  CachedRun run_cached(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra) {
    fs::path traces = tmp / ("traces-" + std::to_string(++runs));
    RunOptions run_options = options(extra, true);
    run_options.env["JITCACHE_TRACE_DIR"] = traces.string();
    return run_traced(argv, run_options, traces);
  }

  // Applies `edit` to the "answers" of every sidecar in the cache. The size record no longer
  // matches the files then: it is removed, so the next writer rebuilds it by a scan.
  template <typename Edit>
  void edit_answers(Edit edit) {
    fs::remove(cache / "size");
    for (const fs::path& file : entry_files(cache)) {
      StoredEntry entry = read_entry(file);
      edit(entry.sidecar);
      rewrite_entry(file, entry.sidecar.dump(), entry.binary);
    }
  }

  // Without jitcache, cold and warm: the same answers, and the warm run served every build.
  // `builds` distinct builds, `repeats` more of the same key (served by the first even on the cold run).
  void expect_parity(const std::vector<std::string>& argv, int builds,
                     const std::map<std::string, std::string>& extra = {}, int repeats = 0) {
    RunResult plain = run(argv, options(extra, false));
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    ASSERT_TRUE(plain.out.find("\ndone\n") != std::string::npos || plain.out.find("example ok\n") != std::string::npos)
        << plain.out;
    fs::path cold_traces = tmp / ("traces-" + std::to_string(++runs));
    RunOptions cold_options = options(extra, true);
    cold_options.env["JITCACHE_TRACE_DIR"] = cold_traces.string();
    CachedRun cold = run_traced(argv, cold_options, cold_traces);
    ASSERT_EQ(cold.result.exit_code, 0) << cold.result.err;
    // A repeat is served by the build before it: from the memory tier, or, when that build went to
    // the capture helper, from the disk once the helper stored it; a helper whose worker has not
    // started it yet (still loading the driver: a loaded machine) is not waited for, and the repeat
    // is built again (issue 39). Such a repeat says so: its reason starts "built here: " (its
    // capture helper had not started it, gave up waiting for it, its worker got too little CPU, or
    // with PoCL's cache on its capture was still in flight); every other miss is a first build.
    int built_behind_a_helper = 0;
    for (const auto& trace : cold.traces) {
      built_behind_a_helper += trace.value("verdict", "") == "miss" &&
                               trace.value("reason", "").rfind("built here: ", 0) == 0;
    }
    EXPECT_EQ(cold.verdicts["miss"] - built_behind_a_helper, builds) << kinds(cold);
    EXPECT_EQ(cold.verdicts["miss"] + cold.verdicts["hit"], builds + repeats) << kinds(cold);
    const bool rusticl = extra.count("RUSTICL_ENABLE") > 0;
    EXPECT_EQ(differences(plain.out, cold.result.out, {}, rusticl), "") << "cold run";
    fs::path warm_traces = tmp / ("traces-" + std::to_string(++runs));
    RunOptions warm_options = options(extra, true);
    warm_options.env["JITCACHE_TRACE_DIR"] = warm_traces.string();
    CachedRun warm = run_traced(argv, warm_options, warm_traces);
    ASSERT_EQ(warm.result.exit_code, 0) << warm.result.err;
    EXPECT_EQ(warm.verdicts["hit"], builds + repeats) << kinds(warm);
    EXPECT_EQ(differences(plain.out, warm.result.out, helper_sizes(), rusticl), "") << "warm run";
    if (rusticl) {  // the quirk's difference is real: without it masked, the warm run differs there only
      const std::string unmasked = differences(plain.out, warm.result.out, helper_sizes());
      EXPECT_NE(unmasked.find("CL_PROGRAM_BUILD_OPTIONS: size 1 = \"\""), std::string::npos) << unmasked;
    }
  }
};

// Attributes, arg info with every qualifier, warnings in the log, options, a build callback and
// compile + link, on real PoCL through the real ICD loader.
// The attributes program is built twice: the second build is served by the first (see expect_parity).
TEST_F(QueryParity, CorpusOnPocl) { expect_parity({CL_PARITY_APP, "corpus"}, 9, {}, 1); }

// The same corpus built for two devices at once (PoCL with two pthread devices).
TEST_F(QueryParity, CorpusOnTwoDevices) {
  expect_parity({CL_PARITY_APP, "corpus"}, 18, {{"POCL_DEVICES", "pthread pthread"}});
}

// IL with a specialization constant, on the IL test driver (PoCL 3.1 takes no IL).
TEST_F(QueryParity, IlWithSpecConstantsOnTestDriver) {
  fs::path vendors = tmp / "vendors";
  fs::create_directories(vendors);
  write_text(vendors / "jitcache-test-il.icd", std::string(TEST_IL_ICD) + "\n");
  expect_parity({CL_PARITY_APP, "il", IL_FIXTURE}, 1, {{"OCL_ICD_VENDORS", vendors.string()}});
}

// Level Zero on its test driver: the example prints its build log, kernel names, each kernel's
// name, the module's properties and native binary (every query the driver offers).
TEST_F(QueryParity, LevelZeroModuleOnTestDriver) {
  expect_parity({LEVEL_ZERO_EXAMPLE, "--build-log"}, 1, {{"ZE_ENABLE_ALT_DRIVERS", LEVEL_ZERO_TEST_DRIVER}});
}

// Recorded answers are read back as hostile input. An entry without a record (written by an older
// jitcache) is not served but rebuilt and replaced. A record of another version or malformed is
// found when the app first asks a recorded query (the hit decodes it only then, lazy_answers.hpp):
// that run gets the driver's answers, with one warning, and the entry is dropped, so the next run
// rebuilds it and the app's answers are those of its own build again.
TEST_F(QueryParity, EntriesWithBadRecordedAnswersAreRebuilt) {
  struct Case {
    const char* name;
    std::function<void(nlohmann::json&)> edit;
  };
  const std::vector<Case> cases = {
      {"missing", [](nlohmann::json& meta) { meta.erase("answers"); }},
      {"another version", [](nlohmann::json& meta) { meta["answers"]["version"] = 99; }},
      {"not an object", [](nlohmann::json& meta) { meta["answers"] = "answers"; }},
      {"log not a string", [](nlohmann::json& meta) { meta["answers"]["build_log"] = 5; }},
      {"kernels not an object", [](nlohmann::json& meta) { meta["answers"]["kernels"] = nlohmann::json::array(); }},
      {"bad hex", [](nlohmann::json& meta) {
         for (auto& kernel : meta["answers"]["kernels"]) kernel["attributes"]["bytes"] = "zz";
       }},
      {"odd hex", [](nlohmann::json& meta) {
         for (auto& kernel : meta["answers"]["kernels"]) kernel["attributes"]["bytes"] = "abc";
       }},
      {"status out of range", [](nlohmann::json& meta) {
         for (auto& kernel : meta["answers"]["kernels"]) kernel["attributes"]["status"] = 1ll << 40;
       }},
      {"an argument of four answers", [](nlohmann::json& meta) {
         for (auto& kernel : meta["answers"]["kernels"]) kernel["args"] = {{1, 2, 3, 4}};
       }},
      {"a kernel left out (issue 28.7: its attributes were answered empty)", [](nlohmann::json& meta) {
         meta["answers"]["kernels"].erase(meta["answers"]["kernels"].begin());
       }},
      {"an oversized answer", [](nlohmann::json& meta) {
         for (auto& kernel : meta["answers"]["kernels"]) kernel["attributes"]["bytes"] = std::string((64u << 10) * 2 + 2, 'a');  // one byte over the cap
       }},
  };
  const std::vector<std::string> app = {CL_PARITY_APP, "file", std::string(EXAMPLE_KERNELS) + "/vector_math.cl",
                                        std::string("-I ") + EXAMPLE_KERNELS};
  RunResult plain = run(app, options({}, false));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(run_cached(app, {}).verdicts["miss"], 1);
  for (const Case& bad : cases) {
    SCOPED_TRACE(bad.name);
    edit_answers(bad.edit);
    if (bad.name != std::string("missing")) {
      CachedRun served_badly = run_cached(app, {});
      EXPECT_EQ(served_badly.result.exit_code, 0) << served_badly.result.err;
      EXPECT_EQ(served_badly.verdicts["hit"], 1) << kinds(served_badly);
      EXPECT_EQ(occurrences(served_badly.result.err, kDroppedAfterServed), 1u) << served_badly.result.err;
      EXPECT_TRUE(entry_files(cache).empty()) << "the entry was not dropped";
    }
    CachedRun rebuilt = run_cached(app, {});
    EXPECT_EQ(rebuilt.result.exit_code, 0) << rebuilt.result.err;
    EXPECT_EQ(rebuilt.verdicts[bad.name == std::string("missing") ? "stale" : "miss"], 1) << kinds(rebuilt);
    EXPECT_EQ(differences(plain.out, rebuilt.result.out), "");
    CachedRun served = run_cached(app, {});  // the rebuilt entry carries a good record again
    EXPECT_EQ(served.verdicts["hit"], 1) << kinds(served);
    EXPECT_EQ(differences(plain.out, served.result.out, helper_sizes()), "");
  }

  // Level Zero: its record is checked the same way.
  fs::remove_all(cache);
  const std::vector<std::string> ze_app = {LEVEL_ZERO_EXAMPLE, "--build-log"};
  const std::map<std::string, std::string> ze_env = {{"ZE_ENABLE_ALT_DRIVERS", LEVEL_ZERO_TEST_DRIVER}};
  RunResult ze_plain = run(ze_app, options(ze_env, false));
  ASSERT_EQ(run_cached(ze_app, ze_env).verdicts["miss"], 1);
  for (const Case& bad : {cases[0], cases[1], cases[2], cases[3]}) {
    SCOPED_TRACE(std::string("level zero: ") + bad.name);
    edit_answers(bad.edit);
    CachedRun rebuilt = run_cached(ze_app, ze_env);
    EXPECT_EQ(rebuilt.verdicts["stale"], 1) << kinds(rebuilt);
    EXPECT_EQ(rebuilt.result.out, ze_plain.out);
    EXPECT_EQ(run_cached(ze_app, ze_env).verdicts["hit"], 1);
  }
  // An app that asks for no log handle: its record is never read, so a damaged one is served.
  const std::vector<std::string> ze_no_log = {LEVEL_ZERO_EXAMPLE};
  RunResult ze_no_log_plain = run(ze_no_log, options(ze_env, false));
  edit_answers(cases[3].edit);
  CachedRun unread = run_cached(ze_no_log, ze_env);
  EXPECT_EQ(unread.verdicts["hit"], 1) << kinds(unread);
  EXPECT_EQ(unread.result.out, ze_no_log_plain.out);
}

// A hit whose record turns out malformed at the app's first recorded query (a hand-edited sidecar):
// the app's kernel computes what it computes without jitcache, each query is answered (by the
// driver), one warning, and the entry is dropped: the next run rebuilds it, the one after is served.
TEST_F(QueryParity, AMalformedRecordFoundAtTheFirstQueryFallsBackToTheDriver) {
  const fs::path kernel = tmp / "compute.cl";
  write_text(kernel,
             "__kernel __attribute__((work_group_size_hint(64, 1, 1)))\n"
             "void compute(__global int* out) { out[get_global_id(0)] = 3 * (int)get_global_id(0) + 1; }\n");
  const std::vector<std::string> app = {KERNEL_FILE_APP, kernel.string(), "-cl-kernel-arg-info", "--queries"};
  RunResult plain = run(app, options({}, false));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_NE(plain.out.find("1 4 7 10"), std::string::npos) << plain.out;
  ASSERT_EQ(run_cached(app, {}).verdicts["miss"], 1);
  edit_answers([](nlohmann::json& meta) {
    for (auto& kernel_answers : meta["answers"]["kernels"]) kernel_answers["attributes"]["bytes"] = "zz";
  });
  CachedRun served = run_cached(app, {});
  ASSERT_EQ(served.result.exit_code, 0) << served.result.err;
  EXPECT_EQ(served.verdicts["hit"], 1) << kinds(served);
  EXPECT_EQ(served.result.out, plain.out);
  for (const char* query : {"CL_KERNEL_ATTRIBUTES (", "CL_KERNEL_ARG_NAME (", "CL_PROGRAM_BUILD_LOG ("}) {
    EXPECT_NE(line_starting(served.result.err, query), "") << query << "\n" << served.result.err;
  }
  EXPECT_EQ(occurrences(served.result.err, kDroppedAfterServed), 1u) << served.result.err;
  EXPECT_TRUE(entry_files(cache).empty()) << "the entry was not dropped";
  // Counted as what it is: a corrupt entry, not a binary the driver refused.
  EXPECT_EQ(stats_counter(JITCACHE_TOOL, cache, "corrupt_entries"), 1);
  EXPECT_EQ(stats_counter(JITCACHE_TOOL, cache, "stale_rejected"), 0);

  CachedRun rebuilt = run_cached(app, {});
  EXPECT_EQ(rebuilt.verdicts["miss"], 1) << kinds(rebuilt);
  EXPECT_EQ(rebuilt.result.out, plain.out);
  CachedRun again = run_cached(app, {});
  EXPECT_EQ(again.verdicts["hit"], 1) << kinds(again);
  EXPECT_EQ(again.result.out, plain.out);
  EXPECT_EQ(again.result.err.find(kDroppedAfterServed), std::string::npos) << again.result.err;
  for (const char* query : {"CL_KERNEL_ATTRIBUTES (0): __attribute__((work_group_size_hint(64, 1, 1",
                            "CL_KERNEL_ARG_NAME (0): out"}) {  // the app's own build's answers again
    EXPECT_NE(line_starting(plain.err, query), "") << plain.err;
    EXPECT_EQ(line_starting(again.result.err, query), line_starting(plain.err, query));
  }
}

// The programs the examples build.
TEST_F(QueryParity, ExampleKernels) {
  for (const char* kernel : {"vector_math.cl", "integer_ops.cl"}) {
    SCOPED_TRACE(kernel);
    fs::remove_all(cache);
    expect_parity({CL_PARITY_APP, "file", std::string(EXAMPLE_KERNELS) + "/" + kernel,
                   std::string("-I ") + EXAMPLE_KERNELS},
                  1);
  }
}

// Issue 28 item 8: a second real driver, Mesa's rusticl on llvmpipe, alone in the ICD loader's
// list. Its 22.3 binaries are SPIR-V plus rusticl's header and load back; what differs from PoCL is
// in rusticl_differences(). The corpus is not run here: rusticl 22.3 fails its clLinkProgram and
// panics (abort) when the app asks the failed program's CL_PROGRAM_BINARIES, without jitcache too.
std::map<std::string, std::string> on_rusticl() {
  return {{"OCL_ICD_VENDORS", std::string(JITCACHE_TEST_VENDORS) + "/rusticl"}, {"RUSTICL_ENABLE", "llvmpipe"}};
}

TEST_F(QueryParity, ExampleKernelsOnRusticl) {
  for (const char* kernel : {"vector_math.cl", "integer_ops.cl"}) {
    SCOPED_TRACE(kernel);
    fs::remove_all(cache);
    expect_parity({CL_PARITY_APP, "file", std::string(EXAMPLE_KERNELS) + "/" + kernel,
                   std::string("-I ") + EXAMPLE_KERNELS},
                  1, on_rusticl());
  }
}

// The kernels the pyopencl apps build (the apps suite's and the coverage test's), taken from the
// scripts' SOURCE strings and built with the options the scripts give them.
TEST_F(QueryParity, PyOpenClAppsKernels) {
  const std::vector<std::pair<std::string, std::string>> scripts = {
      {APPS_SUITE_PYOPENCL_SCRIPT, ""}, {COVERAGE_PYOPENCL_SCRIPT, "-cl-mad-enable"}};
  const std::regex source_string("(SOURCE\\w*) = \"\"\"([^\"]*)\"\"\"");
  int checked = 0;
  for (const auto& [script, options] : scripts) {
    std::string text = read_text(script);
    for (std::sregex_iterator it(text.begin(), text.end(), source_string), end; it != end; ++it) {
      std::string name = (*it)[1];
      SCOPED_TRACE(script + " " + name);
      fs::path kernel = tmp / (name + "-" + std::to_string(checked++) + ".cl");
      write_text(kernel, (*it)[2]);
      // pyopencl_kernels.py builds SOURCE_A with -cl-mad-enable, SOURCE_B without.
      std::string used = name == "SOURCE_B" ? "" : options;
      fs::remove_all(cache);
      expect_parity({CL_PARITY_APP, "file", kernel.string(), used}, 1);
    }
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace jitcache::testing
