// The `jitcache` tool against real PoCL apps run under `jitcache run`: exact counters from
// `stats --json` (also with 8 processes at once), listing, extraction, verify, evict, clear, and
// `explain` naming the component that caused each kind of miss.
#include <gtest/gtest.h>

#include <future>
#include <regex>

#include "entry_files.hpp"
#include "hashing/digest.hpp"
#include "store/local/disk_store.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ToolCli : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path kernels = tmp / "kernels";

  void SetUp() override { copy_sources(EXAMPLE_KERNELS, kernels); }

  // The tool with the test's cache; PoCL's own kernel cache off so that it hides nothing.
  RunResult tool(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), {JITCACHE_TOOL, "--dir", cache.string()});
    RunOptions options;
    options.env = {{"POCL_KERNEL_CACHE", "0"}};
    for (auto& [name, value] : env) options.env[name] = value;
    options.unset = {"LD_PRELOAD", "JITCACHE_DIR", "JITCACHE_TRACE", "JITCACHE_TRACE_DIR"};
    options.cache_root = cache;  // `run` apps leave capture helpers: wait for them (test_support.hpp)
    return run(args, options);
  }

  json tool_json(std::vector<std::string> args, int expected_exit = 0) {
    args.push_back("--json");
    RunResult result = tool(args);
    EXPECT_EQ(result.exit_code, expected_exit) << result.err;
    json parsed = json::parse(result.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << result.out;
    return parsed;
  }

  // The example app under `jitcache run --trace`, its kernels from the test's copy.
  RunResult run_example(std::vector<std::string> app_args = {}, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> args = {"run", "--trace", "--", OPENCL_EXAMPLE, "--kernels", kernels.string()};
    args.insert(args.end(), app_args.begin(), app_args.end());
    RunResult result = tool(args, env);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("all results correct"), std::string::npos) << result.out << result.err;
    return result;
  }

  json explain_last() { return tool_json({"explain", "--last"}); }

  // Simulates an entry made under different conditions (an older driver, other spec constants):
  // the entry of `key` moves to another key with `edit` applied to its sidecar's components.
  void rekey_entry(const std::string& key, const std::string& component,
                   const std::function<void(json& value)>& edit) {
    std::string error;
    auto store = DiskStore::open(cache, StoreLimits{}, &error);
    ASSERT_TRUE(store) << error;
    const Digest128 old_key = *Digest128::from_hex(key);
    LoadResult loaded = store->load(old_key);
    ASSERT_EQ(loaded.status, LoadStatus::hit) << loaded.reason;
    json& target = loaded.sidecar["components"][component];
    edit(target["value"]);
    target["digest"] = xxh3_128(target["value"].dump()).hex();
    const Digest128 new_key = xxh3_128("rekeyed " + key + component);
    loaded.sidecar["key"] = new_key.hex();
    ASSERT_EQ(store->save(new_key, loaded.binary, loaded.sidecar).status, SaveStatus::stored);
    ASSERT_TRUE(store->remove(old_key));
  }
};

std::int64_t counter(const json& stats, const char* name) { return stats["counters"].value(name, std::int64_t{-1}); }

TEST_F(ToolCli, RunThenExactStatsListShowVerifyEvictClear) {
  run_example();  // cold: 2 programs built and stored
  run_example();  // warm: 2 hits
  json stats = tool_json({"stats"});
  EXPECT_EQ(counter(stats, "misses"), 2);
  EXPECT_EQ(counter(stats, "hits_disk"), 2);
  EXPECT_EQ(counter(stats, "stores"), 2);
  EXPECT_EQ(counter(stats, "errors"), 0);
  EXPECT_EQ(stats["store"]["entries"], 2);
  EXPECT_GT(counter(stats, "time_saved_us"), 0);
  EXPECT_GT(counter(stats, "bytes_stored"), 0);

  // Eight apps at once: every one of their 16 hits is counted, none lost in the merge.
  std::vector<std::future<RunResult>> apps;
  for (int i = 0; i < 8; ++i) {
    apps.push_back(std::async(std::launch::async, [this] {
      return tool({"run", "--", OPENCL_EXAMPLE, "--kernels", kernels.string()});
    }));
  }
  for (auto& app : apps) {
    RunResult result = app.get();
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("all results correct"), std::string::npos);
  }
  stats = tool_json({"stats"});
  EXPECT_EQ(counter(stats, "hits_disk"), 2 + 16);
  EXPECT_EQ(counter(stats, "misses"), 2);
  EXPECT_EQ(stats["hits"], 18);
  EXPECT_EQ(stats["lookups"], 20);

  // ls: both entries, each hit 9 times (1 + 8), biggest first with --sort size.
  json listing = tool_json({"ls", "--sort", "size"});
  ASSERT_EQ(listing["entries"].size(), 2u);
  EXPECT_GE(listing["entries"][0]["bytes"], listing["entries"][1]["bytes"]);
  for (const json& entry : listing["entries"]) EXPECT_EQ(entry["hits"], 9);
  const std::string key = listing["entries"][0]["key"];
  RunResult human = tool({"ls"});
  EXPECT_NE(human.out.find(key), std::string::npos);
  EXPECT_NE(human.out.find("2 entries"), std::string::npos) << human.out;

  // ls: the store's own order (by key) unless asked, in JSON and as printed; --sort used: last use first.
  const json by_key = tool_json({"ls"});
  EXPECT_EQ(by_key["sort"], "key");
  const std::string first = by_key["entries"][0]["key"], second = by_key["entries"][1]["key"];
  EXPECT_LT(first, second);
  EXPECT_LT(human.out.find(first), human.out.find(second)) << human.out;
  const fs::path first_file = cache / first.substr(0, 2) / first.substr(2, 2) / (first + ".entry");
  fs::last_write_time(first_file, fs::last_write_time(first_file) - std::chrono::hours(1));
  EXPECT_EQ(tool_json({"ls", "--sort", "used"})["entries"][0]["key"], second);
  const RunResult by_use = tool({"ls", "--sort", "used"});
  EXPECT_LT(by_use.out.find(second), by_use.out.find(first)) << by_use.out;

  // show: readable sidecar, and the binary extracted byte for byte.
  const fs::path file = cache / key.substr(0, 2) / key.substr(2, 2) / (key + ".entry");
  RunResult shown = tool({"show", key.substr(0, 8), "--extract", (tmp / "out.bin").string()});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  ASSERT_FALSE(read_entry(file).binary.empty());
  EXPECT_EQ(read_text(tmp / "out.bin"), read_entry(file).binary);
  shown = tool({"show", key.substr(0, 8)});
  EXPECT_NE(shown.out.find("Key components"), std::string::npos) << shown.out;
  EXPECT_EQ(tool({"show", "zzzz"}).exit_code, 1);

  // verify: sound, then one corrupted byte is found, then quarantined.
  EXPECT_EQ(tool_json({"verify"})["ok"], true);
  std::string bytes = read_text(file);
  bytes[bytes.size() - 10] ^= 0x5a;  // in the binary
  write_text(file, bytes);
  json verdict = tool_json({"verify"}, 1);
  EXPECT_EQ(verdict["ok"], false);
  ASSERT_EQ(verdict["problems"].size(), 1u);
  EXPECT_NE(verdict["problems"][0]["path"].get<std::string>().find(key), std::string::npos);
  EXPECT_NE(verdict["problems"][0]["problem"].get<std::string>().find("checksum"), std::string::npos);
  EXPECT_EQ(tool({"verify", "--quarantine"}).exit_code, 1);
  EXPECT_EQ(tool_json({"verify"})["ok"], true);
  EXPECT_EQ(tool_json({"stats"})["store"]["entries"], 1);

  // evict down to nothing, then clear an (again) populated cache.
  json evicted = tool_json({"evict", "--max-size", "1"});
  EXPECT_EQ(evicted["removed_entries"], 1);
  EXPECT_EQ(counter(tool_json({"stats"}), "evictions"), 1);
  run_example();
  EXPECT_EQ(tool_json({"clear"})["removed_entries"], 2);
  EXPECT_EQ(tool_json({"ls"})["entries"].size(), 0u);
  EXPECT_EQ(tool({"evict"}).exit_code, 2);  // neither limit given: usage error
}

// Long commands draw a progress line on a terminal (a pty from script(1)) and nothing extra when
// their output is piped.
TEST_F(ToolCli, LongCommandsShowProgressOnATerminalOnly) {
  run_example();
  struct Case {
    std::vector<std::string> words;  // "OUT": a file of the run's own (piped or tty)
    std::string line_start;
  };
  const std::vector<Case> cases = {{{"verify"}, "\r\033[K  scanning"},
                                   {{"ls"}, "\r\033[K  listing"},
                                   {{"ls", "--sort", "used"}, "\r\033[K  listing"},
                                   {{"evict", "--max-size", "1G"}, "\r\033[K  scanning"},
                                   {{"pack", "create", "-o", "OUT"}, "\r\033[K  listing"},
                                   {{"pack", "import", (tmp / "piped.pack").string()}, "\r\033[K  importing"},
                                   {{"warm"}, "\rjitcache warm: "}};
  for (const Case& one : cases) {
    auto words = [&](const std::string& run) {
      std::vector<std::string> out = one.words;
      for (std::string& word : out) word = word == "OUT" ? (tmp / (run + ".pack")).string() : word;
      return out;
    };
    const std::string name = one.words[0] + (one.words.size() > 1 ? " " + one.words[1] : "");
    const RunResult piped = tool(words("piped"));
    EXPECT_EQ(piped.exit_code, 0) << name << ": " << piped.out << piped.err;
    EXPECT_EQ(piped.err.find('\r'), std::string::npos) << name << ": " << piped.err;
    std::string line = std::string(JITCACHE_TOOL) + " --dir " + cache.string();
    for (const std::string& word : words("tty")) line += " " + word;
    RunOptions options;
    options.unset = {"LD_PRELOAD", "JITCACHE_DIR"};
    const RunResult on_tty = run({"/usr/bin/script", "-qec", line, "/dev/null"}, options);
    EXPECT_EQ(on_tty.exit_code, 0) << on_tty.out << on_tty.err;
    EXPECT_NE(on_tty.out.find(one.line_start), std::string::npos) << name << ": " << on_tty.out;
  }
}

TEST_F(ToolCli, ExplainNamesOptionsHeaderAndEnvironmentChanges) {
  run_example({"--options", "-DOFFSET=5"});

  run_example({"--options", "-DOFFSET=6"});  // integer_ops misses
  json why = explain_last();
  EXPECT_EQ(why["verdict"], "miss");
  ASSERT_FALSE(why["closest"].empty()) << why.dump(2);
  json difference = why["closest"][0]["differences"][0];
  EXPECT_EQ(why["closest"][0]["differences"].size(), 1u);
  EXPECT_EQ(difference["component"], "options");
  EXPECT_EQ(difference["description"], "build options '-DOFFSET=6' vs '-DOFFSET=5'");
  EXPECT_EQ(why["explanation"], "miss: build options '-DOFFSET=6' vs '-DOFFSET=5'");

  std::string header = read_text(kernels / "common.h");
  header.replace(header.find("3.0f"), 4, "5.0f");
  write_text(kernels / "common.h", header);
  run_example({"--options", "-DOFFSET=6"});  // vector_math misses
  why = explain_last();
  ASSERT_FALSE(why["closest"].empty()) << why.dump(2);
  ASSERT_EQ(why["closest"][0]["differences"].size(), 1u) << why.dump(2);
  difference = why["closest"][0]["differences"][0];
  EXPECT_EQ(difference["component"], "headers");
  EXPECT_EQ(difference["subject"], "common.h");
  EXPECT_NE(difference["description"].get<std::string>().find("header common.h changed (digest "), std::string::npos);
  RunResult human = tool({"explain", "--last"});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_EQ(human.out.rfind("miss: header common.h changed", 0), 0u) << human.out;
  std::printf("%s", human.out.c_str());  // the README shows this output

  run_example({"--options", "-DOFFSET=6"}, {{"POCL_WORK_GROUP_METHOD", "cbs"}});  // both miss
  why = explain_last();
  ASSERT_FALSE(why["closest"].empty()) << why.dump(2);
  ASSERT_EQ(why["closest"][0]["differences"].size(), 1u) << why.dump(2);
  difference = why["closest"][0]["differences"][0];
  EXPECT_EQ(difference["component"], "environment");
  EXPECT_EQ(difference["description"], "env POCL_WORK_GROUP_METHOD=cbs vs unset");
}

TEST_F(ToolCli, ExplainNamesDriverAndSpecConstantChangesFromStoredSidecars) {
  run_example();
  const json first = tool_json({"ls"});
  ASSERT_EQ(first["entries"].size(), 2u);
  std::string integer_ops;
  for (const json& entry : first["entries"]) {
    if (entry["kernel_names"][0] == "square_plus_offset") integer_ops = entry["key"];
  }
  ASSERT_FALSE(integer_ops.empty());

  // As if the entry had been built by an older driver: the next run misses it.
  rekey_entry(integer_ops, "compiler", [](json& value) { value["versions"]["driver_version"] = "2.0"; });
  run_example();
  json why = explain_last();
  ASSERT_FALSE(why["closest"].empty()) << why.dump(2);
  ASSERT_EQ(why["closest"][0]["differences"].size(), 1u) << why.dump(2);
  json difference = why["closest"][0]["differences"][0];
  EXPECT_EQ(difference["component"], "compiler");
  EXPECT_EQ(difference["subject"], "driver_version");
  EXPECT_EQ(difference["cached"], "2.0");

  rekey_entry(integer_ops, "device", [](json& value) { value["device_version"] = "OpenCL 1.2 old device"; });
  run_example();
  why = explain_last();
  ASSERT_FALSE(why["closest"].empty()) << why.dump(2);
  difference = why["closest"][0]["differences"][0];
  EXPECT_EQ(difference["component"], "device");
  EXPECT_EQ(difference["subject"], "device_version");

  // As if the entry had been built with a specialization constant the app no longer sets.
  rekey_entry(integer_ops, "spec_constants",
              [](json& value) { value = json::array({{{"id", 3}, {"value_hex", "08000000"}}}); });
  run_example();
  why = explain_last();
  ASSERT_FALSE(why["closest"].empty()) << why.dump(2);
  difference = why["closest"][0]["differences"][0];
  EXPECT_EQ(difference["component"], "spec_constants");
  EXPECT_EQ(difference["description"], "spec constant 3 not set (module default) vs 0x08000000 (8)");
}

TEST_F(ToolCli, ExplainSaysWhenNothingIsCloseAndWhenItWasAHit) {
  run_example();
  json why = explain_last();  // a cold cache: nothing to compare with
  EXPECT_TRUE(why["closest"].empty());
  EXPECT_NE(why["explanation"].get<std::string>().find("never built with this cache"), std::string::npos)
      << why.dump(2);
  EXPECT_EQ(tool({"explain"}).exit_code, 2);
  EXPECT_EQ(tool({"explain", (tmp / "missing.json").string()}).exit_code, 1);

  run_example();  // all hits; --last still picks the newest miss, a hit trace says it hit
  int hit_traces = 0;
  for (const auto& file : fs::directory_iterator(cache / "traces")) {
    if (file.path().extension() != ".json" || json::parse(read_text(file.path()))["verdict"] != "hit") continue;
    ++hit_traces;
    json hit = tool_json({"explain", file.path().string()});
    EXPECT_EQ(hit["explanation"].get<std::string>().rfind("hit: served from the disk cache", 0), 0u) << hit.dump(2);
  }
  EXPECT_EQ(hit_traces, 2);
  EXPECT_EQ(explain_last()["verdict"], "miss");
}

// The trace folder is read under the rules the library writes it by (core/trace.hpp): a symlink
// in its place is refused, never followed to whatever it points at.
TEST_F(ToolCli, ExplainLastRefusesASymlinkedTraceFolder) {
  run_example();
  fs::rename(cache / "traces", tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", cache / "traces");
  RunResult result = tool({"explain", "--last"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.err.find("is a symlink"), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
  // doctor's "last lookup" lines follow the same rule: the folder is named, no trace is read.
  const json report = tool_json({"doctor"});
  bool named = false;
  for (const json& check : report["checks"]) {
    EXPECT_NE(check["check"], "last lookup") << check.dump();
    named = named || (check["check"] == "traces" && check["detail"].get<std::string>().find("is a symlink") !=
                                                        std::string::npos);
  }
  EXPECT_TRUE(named) << report.dump(1);
}

TEST_F(ToolCli, VerifyOfACacheThatDoesNotExistYetIsFine) {
  RunResult result = tool({"verify"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_FALSE(fs::exists(cache));  // looking created nothing
}

TEST_F(ToolCli, RunPassesExitCodeSignalsAndEnvironmentThrough) {
  EXPECT_EQ(tool({"run", "--", "/bin/sh", "-c", "exit 7"}).exit_code, 7);
  EXPECT_EQ(tool({"run", "/bin/sh", "-c", "kill -TERM $$"}).exit_code, 128 + SIGTERM);

  const std::string other = "/lib/x86_64-linux-gnu/libm.so.6";
  RunResult env = tool({"run", "--read-only", "--trace", "/usr/bin/env"}, {{"LD_PRELOAD", other}});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  std::smatch preload;
  ASSERT_TRUE(std::regex_search(env.out, preload, std::regex("LD_PRELOAD=([^\n]*)")));
  EXPECT_EQ(preload[1].str(), other + ":" + fs::canonical(JITCACHE_LIBRARY).string());
  EXPECT_NE(env.out.find("JITCACHE_DIR=" + cache.string()), std::string::npos);
  EXPECT_NE(env.out.find("JITCACHE_READ_ONLY=1"), std::string::npos);
  EXPECT_NE(env.out.find("JITCACHE_TRACE=1"), std::string::npos);

  RunResult missing_library = tool({"run", "/bin/true"}, {{"JITCACHE_LIBRARY", "/nonexistent/libjitcache.so"}});
  EXPECT_EQ(missing_library.exit_code, 125);
  EXPECT_NE(missing_library.err.find("/nonexistent/libjitcache.so"), std::string::npos);
  EXPECT_EQ(tool({"run", "/nonexistent/app"}).exit_code, 127);
  EXPECT_EQ(tool({"run"}).exit_code, 2);
}

// A sidecar or trace nested a million deep (hostile or damaged): every command reports it as
// corrupt or unreadable instead of overflowing its stack (issue 14.6).
TEST_F(ToolCli, DeeplyNestedSidecarAndTraceAreRejectedNotACrash) {
  run_example();
  json listing = tool_json({"ls"});
  ASSERT_EQ(listing["entries"].size(), 2u);
  const std::string key = listing["entries"][0]["key"];
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  const fs::path file = cache / key.substr(0, 2) / key.substr(2, 2) / (key + ".entry");
  rewrite_entry(file, deep, read_entry(file).binary);
  const fs::path trace = tmp / "deep-trace.json";
  write_text(trace, "{\"verdict\":\"miss\",\"components\":" + deep + "}");
  for (const std::vector<std::string>& command : {std::vector<std::string>{"ls"}, {"show", key.substr(0, 8)}, {"verify"},
                                                  {"explain", trace.string()}, {"stats"}}) {
    RunResult result = tool(command);
    EXPECT_LT(result.exit_code, 128) << command[0] << " died: " << result.err;  // 128+: killed by a signal
  }
  EXPECT_EQ(tool_json({"verify"}, 1)["ok"], false);  // the entry is reported, not trusted
}

TEST_F(ToolCli, ConfigSaysWhereEachSettingCameFrom) {
  fs::create_directories(cache);
  fs::permissions(cache, fs::perms::owner_all, fs::perm_options::replace);
  write_text(cache / "jitcache.conf", "max_age = 7d\nmax_size = 5G\n");
  RunResult result = tool({"config", "--json"}, {{"JITCACHE_MAX_SIZE", "2G"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::map<std::string, json> by_key;
  const json config = json::parse(result.out);
  for (const json& setting : config["settings"]) by_key[setting["key"].get<std::string>()] = setting;
  EXPECT_EQ(by_key["max_size"]["value"], "2G");
  EXPECT_EQ(by_key["max_size"]["origin"], "env");
  EXPECT_EQ(by_key["max_age"]["value"], "7d");
  EXPECT_EQ(by_key["max_age"]["origin"], "file");
  EXPECT_EQ(by_key["read_only"]["origin"], "default");
  EXPECT_EQ(by_key["dir"]["value"], cache.string());
}

// Traces are counted by `stats` and removed by `clear` with the entries (issue 15.10).
TEST_F(ToolCli, StatsCountsTracesAndClearRemovesThem) {
  run_example();
  // The app's 2 misses and, on PoCL (capture = auto), its capture helpers' 2 "captured" records.
  json stats = tool_json({"stats"});
  EXPECT_EQ(stats["traces"]["files"], 4);
  EXPECT_GT(stats["traces"]["bytes"].get<std::uint64_t>(), 0u);
  json cleared = tool_json({"clear"});
  EXPECT_EQ(cleared["removed_traces"], 4);
  EXPECT_EQ(tool_json({"stats"})["traces"]["files"], 0);
}

// The remote password and the HMAC key never leave the process: not in `config` (text or JSON),
// and not in sidecars or traces even when env_keys matches everything (issue 15.9).
TEST_F(ToolCli, SecretsAreNeverShownOrRecorded) {
  const std::map<std::string, std::string> secrets = {
      {"JITCACHE_REMOTE", "redis://alice:Pa55word@127.0.0.1:1/0"}, {"JITCACHE_REMOTE_HMAC_KEY", "TopSecretKey"}};
  for (const std::vector<std::string>& command : {std::vector<std::string>{"config"}, {"config", "--json"}}) {
    RunResult result = tool(command, secrets);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.find("Pa55word"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("TopSecretKey"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("alice:***@127.0.0.1"), std::string::npos) << result.out;
  }
  for (const char* patterns : {"*", "JITCACHE_*"}) {
    std::map<std::string, std::string> env = secrets;
    env["JITCACHE_ENV_KEYS"] = patterns;
    env["JITCACHE_REMOTE_CONNECT_TIMEOUT_MS"] = "20";
    run_example({}, env);
  }
  ASSERT_FALSE(entry_files(cache).empty());
  std::size_t files = 0;
  for (const auto& item : fs::recursive_directory_iterator(cache)) {
    if (!item.is_regular_file() || item.path().extension() == ".bin") continue;
    const std::string text = read_text(item.path());
    ++files;
    EXPECT_EQ(text.find("Pa55word"), std::string::npos) << item.path();
    EXPECT_EQ(text.find("TopSecretKey"), std::string::npos) << item.path();
  }
  EXPECT_GT(files, 4u);  // sidecars and traces were read
}

}  // namespace
}  // namespace jitcache::testing
