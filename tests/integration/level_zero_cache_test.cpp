// The Level Zero example under LD_PRELOAD=libjitcache.so, through the real loader (Debian libze1)
// and the test driver it loads via ZE_ENABLE_ALT_DRIVERS (no Level Zero device exists here). The
// driver appends one line per real SPIR-V compile to JITCACHE_TEST_ZE_COMPILE_LOG, which is how
// these tests know whether a run compiled.
#include <gtest/gtest.h>

#include "hashing/digest.hpp"
#include "entry_files.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

struct LevelZeroRun : CachedRun {
  int compiles = 0;  // real compiles during this run
};

class LevelZeroCache : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path compile_log = tmp / "compiles.log";
  int runs = 0;

  std::map<std::string, std::string> driver_env() const {
    return {{"ZE_ENABLE_ALT_DRIVERS", LEVEL_ZERO_TEST_DRIVER}, {"JITCACHE_TEST_ZE_COMPILE_LOG", compile_log.string()}};
  }

  int compiles_so_far() const {
    std::string log = fs::exists(compile_log) ? read_text(compile_log) : "";
    return static_cast<int>(std::count(log.begin(), log.end(), '\n'));
  }

  LevelZeroRun run_cached(std::vector<std::string> args = {}, std::map<std::string, std::string> extra = {}) {
    return run_cached_app(example(std::move(args)), extra);
  }

  // `argv` under the preloaded library with traces on, against the test driver.
  LevelZeroRun run_cached_app(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra = {}) {
    fs::path trace_dir = tmp / ("traces-" + std::to_string(++runs));
    RunOptions options;
    options.env = driver_env();
    options.env.insert({{"LD_PRELOAD", JITCACHE_LIBRARY},
                        {"JITCACHE_DIR", cache.string()},
                        {"JITCACHE_TRACE", "1"},
                        {"JITCACHE_TRACE_DIR", trace_dir.string()}});
    for (const auto& [name, value] : extra) options.env[name] = value;
    const int before = compiles_so_far();
    LevelZeroRun cached{run_traced(argv, options, trace_dir)};
    cached.compiles = compiles_so_far() - before;
    return cached;
  }

  RunResult run_plain(std::vector<std::string> args = {}) {
    RunOptions options;
    options.env = driver_env();
    options.unset = {"LD_PRELOAD"};
    return run(example(std::move(args)), options);
  }

  static std::vector<std::string> example(std::vector<std::string> args) {
    args.insert(args.begin(), LEVEL_ZERO_EXAMPLE);
    return args;
  }

  // `jitcache warm --json` against the test driver, with `extra` in its environment.
  nlohmann::json warm_json(const std::map<std::string, std::string>& extra) {
    RunOptions options;
    options.env = driver_env();
    options.env.insert(extra.begin(), extra.end());
    options.env["JITCACHE_DIR"] = cache.string();
    options.unset = {"LD_PRELOAD"};
    RunResult result = run({JITCACHE_TOOL, "warm", "--json"}, options);
    nlohmann::json report = nlohmann::json::parse(result.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << result.out << result.err;
    return report;
  }

  // Replaces every stored binary with `make(old binary)` and fixes the sidecar's and the entry
  // file's checksums, so the store trusts the entry and only the driver can refuse it.
  template <typename Make>
  void rewrite_entries(Make make) {
    for (const fs::path& file : entry_files(cache)) {
      StoredEntry entry = read_entry(file);
      std::string bytes = make(entry.binary);
      entry.sidecar["binary_size"] = bytes.size();
      entry.sidecar["binary_xxh3_64"] = hex64(xxh3_64(bytes));
      rewrite_entry(file, entry.sidecar.dump(), bytes);
    }
  }
};

void expect_success(const RunResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("level zero example ok"), std::string::npos) << result.out;
}

std::string native_binary_line(const std::string& out) {
  std::size_t at = out.find("native binary:");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

TEST_F(LevelZeroCache, FirstRunCompilesAndStoresSecondRunCompilesNothing) {
  RunResult plain = run_plain({"--build-log"});
  expect_success(plain);
  ASSERT_NE(plain.out.find("kernels: scale_ints add_offset dot_partial"), std::string::npos) << plain.out;

  LevelZeroRun first = run_cached({"--build-log"});
  expect_success(first.result);
  EXPECT_EQ(first.result.out, plain.out);
  EXPECT_EQ(first.compiles, 1);
  EXPECT_EQ(first.verdicts["miss"], 1);
  std::vector<fs::path> entries = entry_files(cache);
  ASSERT_EQ(entries.size(), 1u);
  nlohmann::json sidecar = read_entry(entries[0]).sidecar;
  EXPECT_EQ(sidecar["api"], "level_zero");
  EXPECT_EQ(sidecar["kind"], "il");
  EXPECT_EQ(sidecar["kernel_names"], (std::vector<std::string>{"scale_ints", "add_offset", "dot_partial"}));
  EXPECT_EQ(sidecar["components"]["device"]["value"]["name"], "jitcache test device");
  EXPECT_EQ(sidecar["components"]["compiler"]["value"]["versions"]["driver_version"], "1000");

  LevelZeroRun second = run_cached({"--build-log"});
  expect_success(second.result);
  EXPECT_EQ(second.result.out, plain.out);  // same kernel names, properties and native binary
  EXPECT_EQ(second.compiles, 0);
  EXPECT_EQ(second.verdicts["hit"], 1);
  ASSERT_EQ(second.traces.size(), 1u);
  EXPECT_EQ(second.traces[0]["api"], "level_zero");
  EXPECT_EQ(second.traces[0]["tier"], "disk");
}

// Issue 14, case 1 on the Level Zero side: a plugin linked against libze_loader and dlopen'ed
// RTLD_LOCAL calls the preloaded zeModuleCreate, but dlsym(RTLD_NEXT) cannot see its loader. The
// hook finds the loaded loader anyway: the module is created (it failed uninitialised) and cached.
TEST_F(LevelZeroCache, PluginWithItsOwnLoaderIsCachedUnderPreload) {
  const std::vector<std::string> host = {PLUGIN_HOST_APP, LEVEL_ZERO_PLUGIN};  // the plugin path is its argv[0]
  RunOptions plain_options;
  plain_options.env = driver_env();
  plain_options.unset = {"LD_PRELOAD"};
  RunResult plain = run(host, plain_options);
  expect_success(plain);
  for (int round = 0; round < 2; ++round) {
    LevelZeroRun cached = run_cached_app(host);
    expect_success(cached.result);
    EXPECT_EQ(cached.result.out, plain.out);
    EXPECT_EQ(cached.compiles, round == 0 ? 1 : 0);
    EXPECT_EQ(cached.verdicts[round == 0 ? "miss" : "hit"], 1);
  }
}

// The memory tier keeps a context's native binaries: a repeated create in the same process costs
// no compile and no disk read, cold or warm.
TEST_F(LevelZeroCache, RepeatedCreateInOneProcessIsAMemoryHit) {
  RunResult plain = run_plain({"--modules", "3"});
  expect_success(plain);
  LevelZeroRun run = run_cached({"--modules", "3"});
  expect_success(run.result);
  EXPECT_EQ(run.result.out, plain.out);
  EXPECT_EQ(run.compiles, 1);
  EXPECT_EQ(run.verdicts["miss"], 1);
  EXPECT_EQ(run.verdicts["hit"], 2);
  LevelZeroRun next = run_cached({"--modules", "3"});
  EXPECT_EQ(next.result.out, plain.out);
  EXPECT_EQ(next.compiles, 0);
  EXPECT_EQ(next.verdicts["hit"], 3);
  std::map<std::string, int> tiers;
  for (const auto& trace : next.traces) ++tiers[trace["tier"].get<std::string>()];
  EXPECT_EQ(tiers["disk"], 1);
  EXPECT_EQ(tiers["memory"], 2);
}

TEST_F(LevelZeroCache, SpecConstantValuesAreKeyedWithTheirDeclaredWidths) {
  LevelZeroRun three = run_cached({"--scale", "3"});
  expect_success(three.result);
  LevelZeroRun four = run_cached({"--scale", "4"});
  expect_success(four.result);
  EXPECT_EQ(four.compiles, 1);
  EXPECT_EQ(four.verdicts["miss"], 1);
  EXPECT_NE(native_binary_line(four.result.out), native_binary_line(three.result.out));
  EXPECT_EQ(four.result.out, run_plain({"--scale", "4"}).out);

  LevelZeroRun saturate = run_cached({"--scale", "4", "--saturate"});  // the one-byte bool constant
  EXPECT_EQ(saturate.compiles, 1);
  EXPECT_EQ(saturate.verdicts["miss"], 1);

  LevelZeroRun four_again = run_cached({"--scale", "4"});
  EXPECT_EQ(four_again.compiles, 0);
  EXPECT_EQ(four_again.verdicts["hit"], 1);
  EXPECT_EQ(four_again.result.out, four.result.out);
  EXPECT_EQ(run_cached({"--scale", "3"}).verdicts["hit"], 1);

  // The trace shows each value with exactly the width the SPIR-V declares: int 4 bytes, bool 1.
  const nlohmann::json constants = four_again.traces.at(0)["components"]["spec_constants"]["value"];
  ASSERT_EQ(constants.size(), 2u);
  EXPECT_EQ(constants[0]["value_hex"], "04000000");
  EXPECT_EQ(constants[1]["value_hex"], "00");
}

TEST_F(LevelZeroCache, BuildFlagsAreKeyedWithWhitespaceCollapsed) {
  expect_success(run_cached({"--flags", "-ze-opt-level=2"}).result);
  LevelZeroRun spaced = run_cached({"--flags", "  -ze-opt-level=2 "});
  EXPECT_EQ(spaced.compiles, 0);
  EXPECT_EQ(spaced.verdicts["hit"], 1);
  LevelZeroRun disabled = run_cached({"--flags", "-ze-opt-disable"});
  expect_success(disabled.result);
  EXPECT_EQ(disabled.compiles, 1);
  EXPECT_EQ(disabled.verdicts["miss"], 1);
}

TEST_F(LevelZeroCache, OneChangedByteOfSpirvMisses) {
  expect_success(run_cached().result);
  std::string spirv = read_text(EXAMPLE_SPIRV);
  spirv[8] ^= 0x01;  // the generator word: the module stays valid, the bytes differ
  fs::path changed = tmp / "changed.spv";
  write_text(changed, spirv);
  LevelZeroRun run = run_cached({"--spirv", changed.string()});
  expect_success(run.result);
  EXPECT_EQ(run.compiles, 1);
  EXPECT_EQ(run.verdicts["miss"], 1);
}

TEST_F(LevelZeroCache, DamagedNativeBinaryIsRejectedByTheDriverAndRebuilt) {
  RunResult plain = run_plain({"--build-log"});  // the app gets the log of the rebuild
  expect_success(run_cached({"--build-log"}).result);
  rewrite_entries([](std::string binary) {
    binary[9] ^= 0x01;  // inside the driver's header (format version), past its magic
    return binary;
  });
  LevelZeroRun stale = run_cached({"--build-log"});
  expect_success(stale.result);
  EXPECT_EQ(stale.result.out, plain.out);
  EXPECT_EQ(stale.compiles, 1);
  EXPECT_EQ(stale.verdicts["stale"], 1);
  EXPECT_NE(stale.traces.at(0)["reason"].get<std::string>().find("driver rejected"), std::string::npos);

  LevelZeroRun again = run_cached();
  EXPECT_EQ(again.compiles, 0);
  EXPECT_EQ(again.verdicts["hit"], 1);
}

TEST_F(LevelZeroCache, ForeignNativeBinaryIsRejectedByTheDriverAndRebuilt) {
  RunResult plain = run_plain();
  expect_success(run_cached().result);
  rewrite_entries([](const std::string&) { return std::string(4096, 'x'); });
  LevelZeroRun stale = run_cached();
  expect_success(stale.result);
  EXPECT_EQ(stale.result.out, plain.out);
  EXPECT_EQ(stale.compiles, 1);
  EXPECT_EQ(stale.verdicts["stale"], 1);
  EXPECT_EQ(run_cached().verdicts["hit"], 1);
}

TEST_F(LevelZeroCache, DriverUpgradeMissesThroughTheKey) {
  expect_success(run_cached().result);
  LevelZeroRun upgraded = run_cached({}, {{"JITCACHE_TEST_ZE_DRIVER_VERSION", "1001"}});
  expect_success(upgraded.result);
  EXPECT_EQ(upgraded.compiles, 1);
  EXPECT_EQ(upgraded.verdicts["miss"], 1);  // a new key, not a stale entry the driver refused
  EXPECT_EQ(entry_files(cache).size(), 2u);
}

// `jitcache warm` replays the recorded module (SPIR-V, build flags, specialization constants)
// through the real loader and the hook after the test driver's compiler identity changed.
TEST_F(LevelZeroCache, WarmAfterADriverUpgradeMakesTheNextRunAllHits) {
  const std::vector<std::string> args = {"--scale", "4", "--flags", "-ze-opt-level=2"};
  LevelZeroRun first = run_cached(args);
  expect_success(first.result);
  ASSERT_EQ(first.compiles, 1);
  const std::map<std::string, std::string> upgrade = {{"JITCACHE_TEST_ZE_DRIVER_VERSION", "1001"}};

  auto warm = [&] { return warm_json(upgrade); };
  const int before = compiles_so_far();
  nlohmann::json report = warm();
  EXPECT_EQ(report["programs"], 1) << report.dump(2);
  EXPECT_EQ(report["built"], 1) << report.dump(2);
  EXPECT_EQ(compiles_so_far() - before, 1);  // the warm compiled, for the upgraded driver

  RunOptions plain_options;
  plain_options.env = driver_env();
  plain_options.env.insert(upgrade.begin(), upgrade.end());
  plain_options.unset = {"LD_PRELOAD"};
  RunResult plain = run(example(args), plain_options);
  expect_success(plain);
  LevelZeroRun after = run_cached(args, upgrade);
  expect_success(after.result);
  EXPECT_EQ(after.result.out, plain.out);
  EXPECT_EQ(after.compiles, 0);
  EXPECT_EQ(after.verdicts["hit"], 1);
  ASSERT_EQ(after.traces.size(), 1u);
  EXPECT_NE(after.traces[0]["key"], first.traces.at(0)["key"]);  // the upgrade changed the key

  EXPECT_EQ(warm()["already_warm"], 1);
}

// A warm replay loads the native binary it is about to store back first, as OpenCL's do
// (WarmReplay.ARebuiltBinaryThatDoesNotLoadBackIsNotStoredAndReportedFailed on PoCL). Bytes the
// driver cannot load (JITCACHE_TEST_REPLAY_BREAKS_BINARY: the first 16, the test driver's magic and
// format, inverted) are not stored: the program is reported failed with the reason and counted;
// the next warm stores it, and the app then compiles nothing.
TEST_F(LevelZeroCache, AWarmWhoseNativeBinaryDoesNotLoadBackStoresNothing) {
  expect_success(run_cached().result);
  ASSERT_EQ(entry_files(cache).size(), 1u);
  const std::map<std::string, std::string> upgrade = {{"JITCACHE_TEST_ZE_DRIVER_VERSION", "1001"}};
  auto broken = upgrade;
  broken["JITCACHE_TEST_REPLAY_BREAKS_BINARY"] = "1";
  nlohmann::json report = warm_json(broken);
  EXPECT_EQ(report["built"], 0) << report.dump(2);
  ASSERT_EQ(report["failed"], 1) << report.dump(2);
  const std::string reason = report["results"][0]["reason"];
  EXPECT_EQ(reason.rfind("built, but its binary did not load back: zeModuleCreate(ZE_MODULE_FORMAT_NATIVE)", 0), 0u)
      << reason;
  EXPECT_EQ(entry_files(cache).size(), 1u) << "warm stored a binary that did not load back";
  EXPECT_EQ(stats_counter(JITCACHE_TOOL, cache, "warm_unloadable"), 1);

  EXPECT_EQ(warm_json(upgrade)["built"], 1);
  LevelZeroRun after = run_cached({}, upgrade);
  expect_success(after.result);
  EXPECT_EQ(after.compiles, 0);
  EXPECT_EQ(after.verdicts["hit"], 1);
}

TEST_F(LevelZeroCache, UnknownExtensionPassesThroughUncachedWithItsReason) {
  RunResult plain = run_plain({"--program-desc"});
  expect_success(plain);
  for (int i = 0; i < 2; ++i) {
    LevelZeroRun run = run_cached({"--program-desc"});
    expect_success(run.result);
    EXPECT_EQ(run.result.out, plain.out);
    EXPECT_EQ(run.compiles, 1);
    EXPECT_EQ(run.verdicts["uncacheable"], 1);
    ASSERT_EQ(run.traces.size(), 1u);
    EXPECT_NE(run.traces[0]["reason"].get<std::string>().find("pNext"), std::string::npos) << run.traces[0];
  }
  EXPECT_TRUE(entry_files(cache).empty());
}

// A module the driver cannot build: the app gets exactly the driver's error, nothing is stored.
TEST_F(LevelZeroCache, UnreadableSpirvGetsTheDriversErrorAndStoresNothing) {
  fs::path garbage = tmp / "garbage.spv";
  write_text(garbage, std::string(64, 'x'));
  RunResult plain = run_plain({"--spirv", garbage.string(), "--build-log"});
  EXPECT_EQ(plain.exit_code, 1);
  LevelZeroRun cached = run_cached({"--spirv", garbage.string(), "--build-log"});
  EXPECT_EQ(cached.result.exit_code, plain.exit_code);
  EXPECT_EQ(cached.result.out, plain.out);  // the same build log
  EXPECT_NE(cached.result.err.find("zeModuleCreate failed"), std::string::npos) << cached.result.err;
  EXPECT_EQ(cached.verdicts["uncacheable"], 1);  // its spec constants cannot be sized
  EXPECT_TRUE(entry_files(cache).empty());
}

TEST_F(LevelZeroCache, DisabledCacheCompilesEveryTime) {
  for (int i = 0; i < 2; ++i) {
    LevelZeroRun run = run_cached({}, {{"JITCACHE_DISABLE", "1"}});
    expect_success(run.result);
    EXPECT_EQ(run.compiles, 1);
    EXPECT_TRUE(run.traces.empty());
  }
}

}  // namespace
}  // namespace jitcache::testing
