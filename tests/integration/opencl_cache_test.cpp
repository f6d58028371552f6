// The OpenCL example and real clients under LD_PRELOAD=libjitcache.so on the real PoCL driver
// through the real ICD loader. PoCL's own kernel cache is off so it cannot hide anything.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <regex>

#include "hashing/digest.hpp"
#include "entry_files.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

class OpenClCache : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  int runs = 0;

  std::map<std::string, std::string> cache_env(const fs::path& trace_dir) const {
    return {{"LD_PRELOAD", JITCACHE_LIBRARY},
            {"JITCACHE_DIR", cache.string()},
            {"JITCACHE_TRACE", "1"},
            {"JITCACHE_TRACE_DIR", trace_dir.string()},
            {"POCL_KERNEL_CACHE", "0"}};
  }

  CachedRun run_cached(std::vector<std::string> argv, std::map<std::string, std::string> extra = {},
                       RunOptions options = {}) {
    fs::path trace_dir = tmp / ("traces-" + std::to_string(++runs));
    options.env = cache_env(trace_dir);
    for (auto& [name, value] : extra) options.env[name] = value;
    return run_traced(argv, options, trace_dir);
  }

  static std::vector<std::string> example(std::vector<std::string> args = {}) {
    args.insert(args.begin(), OPENCL_EXAMPLE);
    return args;
  }
};

// "opencl_example: build vector_math 612.3 ms" -> 612.3
double build_ms(const std::string& err, const std::string& label) {
  std::smatch match;
  std::regex pattern("build " + label + " ([0-9.]+) ms");
  return std::regex_search(err, match, pattern) ? std::stod(match[1]) : -1;
}

void expect_success(const RunResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("all results correct"), std::string::npos) << result.out;
}

TEST_F(OpenClCache, SecondRunHitsEveryBuildWithIdenticalResults) {
  RunResult plain = run_plain(example());
  expect_success(plain);

  CachedRun first = run_cached(example());
  expect_success(first.result);
  EXPECT_EQ(first.result.out, plain.out);
  EXPECT_EQ(first.verdicts["miss"], 2);
  EXPECT_EQ(first.traces.size(), 2u);
  EXPECT_EQ(entry_files(cache).size(), 2u);

  CachedRun second = run_cached(example());
  expect_success(second.result);
  EXPECT_EQ(second.result.out, plain.out);
  EXPECT_EQ(second.verdicts["hit"], 2);
  EXPECT_EQ(second.traces.size(), 2u);
  for (const auto& trace : second.traces) {
    EXPECT_EQ(trace["tier"], "disk");
    EXPECT_EQ(trace["components"]["options"]["value"].is_string(), true);
  }
  std::printf("[ timing   ] vector_math clBuildProgram: cold %.1f ms, cached %.1f ms\n",
              build_ms(first.result.err, "vector_math"), build_ms(second.result.err, "vector_math"));
  std::printf("[ timing   ] integer_ops clBuildProgram: cold %.1f ms, cached %.1f ms\n",
              build_ms(first.result.err, "integer_ops"), build_ms(second.result.err, "integer_ops"));
}

// Size of every stored binary, by file name (the key).
std::map<std::string, std::uintmax_t> binary_sizes(const fs::path& cache_root) {
  std::map<std::string, std::uintmax_t> sizes;
  for (const auto& file : entry_files(cache_root)) sizes[file.filename().string()] = read_entry(file).binary.size();
  return sizes;
}

// PoCL generates a kernel's work-group code for the app's local size at its first enqueue. With
// capture = release the binary is read when the app releases the program, so it holds that code;
// the default reads it right after the build, before any enqueue.
TEST_F(OpenClCache, CaptureAtReleaseStoresTheCodeGeneratedAtFirstEnqueue) {
  RunResult plain = run_plain(example());
  expect_success(plain);
  const fs::path at_build = tmp / "cache-capture-build";
  CachedRun built = run_cached(example(), {{"JITCACHE_DIR", at_build.string()}});
  CachedRun released = run_cached(example(), {{"JITCACHE_CAPTURE", "release"}});
  for (const CachedRun* cold : {&built, &released}) {
    expect_success(cold->result);
    EXPECT_EQ(cold->result.out, plain.out);
    EXPECT_EQ(cold->verdicts.at("miss"), 2);
  }
  const auto sizes_at_build = binary_sizes(at_build), sizes_at_release = binary_sizes(cache);
  ASSERT_EQ(sizes_at_build.size(), 2u);
  ASSERT_EQ(sizes_at_release.size(), 2u);
  for (const auto& [key, bytes] : sizes_at_build) {
    EXPECT_GT(sizes_at_release.at(key), bytes + 4096) << key;  // at least one more kernel object
    std::printf("[ sizes    ] %s: %ju bytes read at build, %ju at release\n", key.c_str(), bytes,
                sizes_at_release.at(key));
  }

  CachedRun warm = run_cached(example(), {{"JITCACHE_CAPTURE", "release"}});
  expect_success(warm.result);
  EXPECT_EQ(warm.result.out, plain.out);
  EXPECT_EQ(warm.verdicts["hit"], 2);
}

TEST_F(OpenClCache, AsyncBuildCallsBackOnceOnMissAndHit) {
  RunResult plain = run_plain(example({"--async"}));
  expect_success(plain);
  CachedRun first = run_cached(example({"--async"}));
  expect_success(first.result);  // the example fails unless its callback ran exactly once
  EXPECT_EQ(first.verdicts["miss"], 2);
  CachedRun second = run_cached(example({"--async"}));
  expect_success(second.result);
  EXPECT_EQ(second.verdicts["hit"], 2);
  EXPECT_EQ(second.result.out, plain.out);
}

TEST_F(OpenClCache, SameProgramBuiltWithTwoOptionSetsKeepsTwoCorrectEntries) {
  auto args = example({"--options", "-DOFFSET=5", "--rebuild-options", "-DOFFSET=7"});
  RunResult plain = run_plain(args);
  expect_success(plain);
  EXPECT_NE(plain.out.find("offset=5"), std::string::npos);
  EXPECT_NE(plain.out.find("offset=7"), std::string::npos);

  CachedRun first = run_cached(args);
  expect_success(first.result);
  EXPECT_EQ(first.verdicts["miss"], 3);
  EXPECT_EQ(entry_files(cache).size(), 3u);

  CachedRun second = run_cached(args);
  expect_success(second.result);
  EXPECT_EQ(second.verdicts["hit"], 3);
  EXPECT_EQ(second.result.out, plain.out);
}

TEST_F(OpenClCache, WhitespaceInOptionsDoesNotMissButADefineChangeDoes) {
  expect_success(run_cached(example({"--options", "-DOFFSET=5"})).result);
  CachedRun spaced = run_cached(example({"--options", "  -DOFFSET=5   "}));
  EXPECT_EQ(spaced.verdicts["hit"], 2);
  CachedRun changed = run_cached(example({"--options", "-DOFFSET=6"}));
  expect_success(changed.result);
  EXPECT_EQ(changed.verdicts["hit"], 1);   // vector_math
  EXPECT_EQ(changed.verdicts["miss"], 1);  // integer_ops with the new define
  EXPECT_NE(changed.result.out.find("offset=6"), std::string::npos);
}

TEST_F(OpenClCache, EditedHeaderMissesAndGivesTheNewResult) {
  fs::path kernels = tmp / "kernels";
  copy_sources(EXAMPLE_KERNELS, kernels);
  auto args = example({"--kernels", kernels.string()});
  expect_success(run_cached(args).result);
  EXPECT_EQ(run_cached(args).verdicts["hit"], 2);

  std::string header = read_text(kernels / "common.h");
  header.replace(header.find("3.0f"), 4, "5.0f");
  write_text(kernels / "common.h", header);

  RunResult plain = run_plain(args);
  expect_success(plain);
  EXPECT_NE(plain.out.find("scale=5.00"), std::string::npos);
  CachedRun edited = run_cached(args);
  expect_success(edited.result);
  EXPECT_EQ(edited.result.out, plain.out);
  EXPECT_EQ(edited.verdicts["miss"], 1);  // vector_math includes the header
  EXPECT_EQ(edited.verdicts["hit"], 1);   // integer_ops does not
}

// A source that names __TIME__ (here in a comment: the check is a plain, conservative search)
// compiles differently every second, so it is never cached; the other program still is.
TEST_F(OpenClCache, SourceUsingTheTimeIsBuiltEveryTime) {
  fs::path kernels = tmp / "kernels";
  copy_sources(EXAMPLE_KERNELS, kernels);
  write_text(kernels / "integer_ops.cl", read_text(kernels / "integer_ops.cl") + "\n// built at __TIME__\n");
  auto args = example({"--kernels", kernels.string()});
  RunResult plain = run_plain(args);
  expect_success(plain);
  for (int run = 0; run < 2; ++run) {
    CachedRun cached = run_cached(args);
    expect_success(cached.result);
    EXPECT_EQ(cached.result.out, plain.out);
    EXPECT_EQ(cached.verdicts["uncacheable"], 1);
    EXPECT_EQ(cached.verdicts[run == 0 ? "miss" : "hit"], 1);  // vector_math
  }
  EXPECT_EQ(entry_files(cache).size(), 1u);
}

TEST_F(OpenClCache, CorruptedBinaryIsDetectedAndReplaced) {
  RunResult plain = run_plain(example());
  expect_success(run_cached(example()).result);
  for (const fs::path& file : entry_files(cache)) {
    std::string bytes = read_text(file);
    bytes[bytes.size() - read_entry(file).binary.size() / 2] ^= 0x5a;  // in the binary
    write_text(file, bytes);
  }
  CachedRun corrupted = run_cached(example());
  expect_success(corrupted.result);
  EXPECT_EQ(corrupted.result.out, plain.out);
  EXPECT_EQ(corrupted.verdicts["miss"], 2);
  for (const auto& trace : corrupted.traces) EXPECT_NE(trace["reason"].get<std::string>().find("corrupt"), std::string::npos);
  EXPECT_EQ(run_cached(example()).verdicts["hit"], 2);  // the rebuilt entries serve again
}

TEST_F(OpenClCache, BinaryTheDriverRejectsIsDroppedAndRebuilt) {
  RunResult plain = run_plain(example());
  expect_success(run_cached(example()).result);
  // A well-formed entry whose binary is not something PoCL can load (as after a driver upgrade
  // that kept the version strings): checksums agree, so only the driver can refuse it.
  for (const fs::path& file : entry_files(cache)) {
    std::string garbage(4096, 'x');
    StoredEntry entry = read_entry(file);
    entry.sidecar["binary_size"] = garbage.size();
    entry.sidecar["binary_xxh3_64"] = hex64(xxh3_64(garbage));
    rewrite_entry(file, entry.sidecar.dump(), garbage);
  }
  CachedRun stale = run_cached(example());
  expect_success(stale.result);
  EXPECT_EQ(stale.result.out, plain.out);
  EXPECT_EQ(stale.verdicts["stale"], 2);
  EXPECT_EQ(run_cached(example()).verdicts["hit"], 2);
}

TEST_F(OpenClCache, ReadOnlyModeServesHitsAndStoresNothing) {
  CachedRun cold = run_cached(example(), {{"JITCACHE_READ_ONLY", "1"}});
  expect_success(cold.result);
  EXPECT_EQ(cold.verdicts["miss"], 2);
  EXPECT_TRUE(entry_files(cache).empty());

  expect_success(run_cached(example()).result);  // populate
  CachedRun warm = run_cached(example(), {{"JITCACHE_READ_ONLY", "1"}});
  expect_success(warm.result);
  EXPECT_EQ(warm.verdicts["hit"], 2);
}

TEST_F(OpenClCache, UnwritableCacheDirLeavesTheAppCorrect) {
  RunResult plain = run_plain(example());
  fs::create_directories(cache);
  RunOptions options;
  std::vector<std::string> app = example();
  // PoCL itself needs a writable cache dir even with its kernel cache off; nobody's HOME is not.
  std::map<std::string, std::string> env = {{"POCL_CACHE_DIR", (tmp / "pocl").string()}};
  if (::geteuid() == 0) {
    // Root writes anywhere: run the app as nobody against a root it owns but may not write. Nobody
    // may not reach the build tree (a clone in root's 700 home): it runs copies of the example, its
    // kernels, the library and the ICD vendors folder from a folder of this test's.
    const unsigned nobody = 65534;
    const std::vector<fs::path> copies = copy_for_another_user({OPENCL_EXAMPLE, JITCACHE_LIBRARY}, tmp / "bin");
    app[0] = copies[0].string();
    const fs::path kernels = fs::path(EXAMPLE_KERNELS);
    const fs::path kernel_copy = copy_for_another_user(
        {kernels / "common.h", kernels / "integer_ops.cl", kernels / "vector_math.cl"}, tmp / "kernels")[0];
    app.insert(app.end(), {"--kernels", kernel_copy.parent_path().string()});
    env["LD_PRELOAD"] = copies[1].string();
    // The ICD vendors folder the suite pins lives in the build tree too.
    const fs::path pocl_icd = fs::path(JITCACHE_TEST_VENDORS) / "pocl" / "pocl.icd";
    env["OCL_ICD_VENDORS"] = copy_for_another_user({pocl_icd}, tmp / "vendors")[0].parent_path().string();
    ASSERT_EQ(::chown(tmp.path().c_str(), nobody, nobody), 0);
    ASSERT_EQ(::chown(cache.c_str(), nobody, nobody), 0);
    options.run_as_uid = nobody;
  }
  ASSERT_EQ(::chmod(cache.c_str(), 0500), 0);
  CachedRun result = run_cached(app, env, options);
  expect_success(result.result);
  EXPECT_EQ(result.result.out, plain.out);
  EXPECT_TRUE(entry_files(cache).empty());
  // One warning at most, never a flood.
  size_t warnings = 0;
  for (size_t at = 0; (at = result.result.err.find("jitcache: warning", at)) != std::string::npos; ++at) ++warnings;
  EXPECT_LE(warnings, 1u) << result.result.err;
}

TEST_F(OpenClCache, DisabledCacheTouchesNothing) {
  CachedRun disabled = run_cached(example(), {{"JITCACHE_DISABLE", "1"}});
  expect_success(disabled.result);
  EXPECT_TRUE(disabled.traces.empty());
  EXPECT_TRUE(entry_files(cache).empty());
}

TEST_F(OpenClCache, ClinfoRunsUnderTheShim) {
  RunResult plain = run_plain({"/usr/bin/clinfo", "-l"});
  CachedRun shimmed = run_cached({"/usr/bin/clinfo", "-l"});
  EXPECT_EQ(shimmed.result.exit_code, 0) << shimmed.result.err;
  EXPECT_EQ(shimmed.result.out, plain.out);
}

TEST_F(OpenClCache, ClblastAxpyPassesAndHitsOnSecondRun) {
  const std::vector<std::string> args = {"/usr/bin/clblast_test_xaxpy"};
  CachedRun first = run_cached(args);
  ASSERT_EQ(first.result.exit_code, 0) << first.result.out.substr(0, 4000);
  const std::regex failures("[1-9][0-9]* test\\(s\\) failed");
  EXPECT_NE(first.result.out.find("test(s) passed"), std::string::npos) << "clblast ran no test";
  EXPECT_FALSE(std::regex_search(first.result.out, failures)) << "some clblast tests failed";
  EXPECT_GT(first.verdicts["miss"], 0);
  CachedRun second = run_cached(args);
  ASSERT_EQ(second.result.exit_code, 0) << second.result.out.substr(0, 4000);
  EXPECT_EQ(second.verdicts["miss"], 0);
  EXPECT_EQ(second.verdicts["hit"], static_cast<int>(first.traces.size()));
  EXPECT_FALSE(std::regex_search(second.result.out, failures));
}

}  // namespace
}  // namespace jitcache::testing
