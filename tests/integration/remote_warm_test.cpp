// `jitcache warm` from the remote tier on real PoCL through the real ICD loader, against a real
// redis-server: machine A (its own store) runs the example cold and publishes its entries with
// their input records; machine B (an empty store, another compiler identity: pocl_upgrade.hpp)
// warms from what A published, and then runs the example on all hits.
#include <gtest/gtest.h>

#include <set>

#include "pocl_upgrade.hpp"
#include "redis_server.hpp"
#include "s3_server.hpp"
#include "store/remote/remote_framing.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::string>;

const std::string kKernelLine = "__kernel void square_plus_offset";

class RemoteWarm : public ::testing::Test {
 protected:
  TempDir tmp;
  RedisServer server;
  fs::path kernels = tmp / "kernels";
  std::string remote = server.url();  // the file:// case below points it at a directory
  int runs = 0;

  void SetUp() override {
    if (!pocl_layout_present()) GTEST_SKIP() << "needs Debian's PoCL layout";
    copy_sources(EXAMPLE_KERNELS, kernels);
  }

  fs::path cache(const std::string& machine) const { return tmp / ("cache-" + machine); }
  Env machine_b() { return upgraded_pocl(tmp / "b-driver"); }

  Env env(const std::string& machine, const Env& extra) const {
    Env env = {{"JITCACHE_DIR", cache(machine).string()},
               {"JITCACHE_REMOTE", remote},
               // Generous bounds for a loaded 2-core machine; a back-off longer than any run.
               {"JITCACHE_REMOTE_CONNECT_TIMEOUT_MS", "5000"},
               {"JITCACHE_REMOTE_TIMEOUT_MS", "5000"},
               {"JITCACHE_REMOTE_BACKOFF", "1h"},
               {"POCL_KERNEL_CACHE", "0"}};
    for (const auto& [name, value] : extra) env[name] = value;
    return env;
  }

  // `argv` under the shim on `machine`, traced.
  CachedRun run_on(const std::string& machine, const std::vector<std::string>& argv, const Env& extra) {
    fs::path trace_dir = tmp / ("traces-" + machine + "-" + std::to_string(++runs));
    RunOptions options;
    options.env = env(machine, extra);
    options.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    options.env["JITCACHE_TRACE"] = "1";
    options.env["JITCACHE_TRACE_DIR"] = trace_dir.string();
    return run_traced(argv, options, trace_dir);
  }

  CachedRun run_app(const std::string& machine, const Env& extra = {}) {
    return run_on(machine, {OPENCL_EXAMPLE, "--kernels", kernels.string()}, extra);
  }

  nlohmann::json warm(const std::string& machine, const Env& extra, std::vector<std::string> args = {},
                      int* exit_code = nullptr) {
    RunOptions options;
    options.env = env(machine, extra);
    options.unset = {"LD_PRELOAD"};
    std::vector<std::string> argv = {JITCACHE_TOOL, "warm", "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult result = run(argv, options);
    if (exit_code) *exit_code = result.exit_code;
    nlohmann::json report = nlohmann::json::parse(result.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << result.out << result.err;
    return report;
  }

  std::int64_t counter(const std::string& machine, const char* name) {
    nlohmann::json stats = nlohmann::json::parse(read_text(cache(machine) / "stats.json"), nullptr, false);
    return stats.is_object() ? stats.value(name, std::int64_t{0}) : 0;
  }

  // Server names of one kind ("inputs", "program") in any namespace under the default prefix.
  std::vector<std::string> names_of(const std::string& kind) {
    std::vector<std::string> names;
    for (const std::string& name : server.keys("jitcache:*")) {
      if (name.find(":" + kind + ":") != std::string::npos) names.push_back(name);
    }
    return names;
  }

  bool any_value_contains(const std::string& needle) {
    for (const std::string& name : server.keys("*")) {
      std::optional<std::string> value = server.get(name);
      if (value && value->find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

std::set<std::string> keys_of(const CachedRun& run) {
  std::set<std::string> keys;
  for (const auto& trace : run.traces) keys.insert(trace["key"].get<std::string>());
  return keys;
}

void expect_correct(const CachedRun& run, const std::string& output) {
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.out, output);
  EXPECT_NE(run.result.out.find("all results correct"), std::string::npos);
}

TEST_F(RemoteWarm, AnEmptyMachineWarmsFromTheInputsAnotherPublished) {
  RunResult plain = run_plain({OPENCL_EXAMPLE, "--kernels", kernels.string()});
  CachedRun a = run_app("a");
  expect_correct(a, plain.out);
  ASSERT_EQ(a.verdicts["miss"], 2);
  EXPECT_EQ(counter("a", "remote_inputs_sent"), 2);
  EXPECT_EQ(names_of("inputs").size(), 2u);
  EXPECT_EQ(names_of("program").size(), 2u);

  ASSERT_FALSE(fs::exists(cache("b")));
  nlohmann::json report = warm("b", machine_b());
  EXPECT_EQ(report["programs"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 2) << report.dump(2);
  EXPECT_EQ(report["failed"], 0);
  for (const auto& row : report["results"]) EXPECT_EQ(row["source"], "remote") << row.dump();
  // B's warm published its own entries; the input records were on the server already.
  EXPECT_EQ(counter("b", "remote_inputs_already_there"), 2);
  EXPECT_EQ(counter("b", "remote_inputs_sent"), 0);

  CachedRun b = run_app("b", machine_b());
  expect_correct(b, plain.out);
  EXPECT_EQ(b.verdicts["hit"], 2) << b.result.err;
  for (const auto& trace : b.traces) EXPECT_EQ(trace["tier"], "disk") << trace.dump();  // warm put them there
  std::set<std::string> keys_a = keys_of(a), keys_b = keys_of(b);
  for (const std::string& key : keys_b) EXPECT_EQ(keys_a.count(key), 0u) << "B's compiler is another: " << key;

  report = warm("b", machine_b());  // from the local store now; the remote's are the same programs
  EXPECT_EQ(report["already_warm"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 0);
}

// The same from a shared directory (file://): the summaries are found by listing its program/ folder.
TEST_F(RemoteWarm, AnEmptyMachineWarmsFromADirectoryAnotherPublishedTo) {
  const fs::path shared = tmp / "shared";
  fs::create_directories(shared);
  remote = "file://" + shared.string();
  RunResult plain = run_plain({OPENCL_EXAMPLE, "--kernels", kernels.string()});
  CachedRun a = run_app("a");
  expect_correct(a, plain.out);
  ASSERT_EQ(a.verdicts["miss"], 2);
  EXPECT_EQ(counter("a", "remote_inputs_sent"), 2);
  auto files_in = [&](const char* folder) {
    const fs::path where = shared / "jitcache" / folder;
    return fs::exists(where) ? std::distance(fs::directory_iterator(where), fs::directory_iterator()) : 0;
  };
  EXPECT_EQ(files_in("inputs"), 2);
  EXPECT_EQ(files_in("program"), 2);

  nlohmann::json report = warm("b", machine_b());
  EXPECT_EQ(report["programs"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 2) << report.dump(2);
  for (const auto& row : report["results"]) EXPECT_EQ(row["source"], "remote") << row.dump();
  CachedRun b = run_app("b", machine_b());
  expect_correct(b, plain.out);
  EXPECT_EQ(b.verdicts["hit"], 2) << b.result.err;
  for (const auto& trace : b.traces) EXPECT_EQ(trace["tier"], "disk") << trace.dump();
}

// The same from an S3 bucket (s3rver): the summaries are found with ListObjectsV2 and the input
// records fetched by GET, signed with the scheme's own settings.
TEST_F(RemoteWarm, AnEmptyMachineWarmsFromABucketAnotherPublishedTo) {
  JITCACHE_SKIP_WITHOUT_S3RVER();
  S3Server bucket;
  remote = bucket.url("team");
  const Env s3 = bucket.environment();
  RunResult plain = run_plain({OPENCL_EXAMPLE, "--kernels", kernels.string()});
  CachedRun a = run_app("a", s3);
  expect_correct(a, plain.out);
  ASSERT_EQ(a.verdicts["miss"], 2);
  EXPECT_EQ(counter("a", "remote_inputs_sent"), 2);

  Env b_env = machine_b();
  for (const auto& [name, value] : s3) b_env[name] = value;
  nlohmann::json report = warm("b", b_env);
  EXPECT_EQ(report["programs"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 2) << report.dump(2);
  EXPECT_EQ(report["failed"], 0);
  for (const auto& row : report["results"]) EXPECT_EQ(row["source"], "remote") << row.dump();
  CachedRun b = run_app("b", b_env);
  expect_correct(b, plain.out);
  EXPECT_EQ(b.verdicts["hit"], 2) << b.result.err;
  for (const auto& trace : b.traces) EXPECT_EQ(trace["tier"], "disk") << trace.dump();
}

TEST_F(RemoteWarm, FiltersSelectRemotePrograms) {
  CachedRun a = run_app("a");
  ASSERT_EQ(a.verdicts["miss"], 2);
  const std::string one_key = *keys_of(a).begin();
  EXPECT_EQ(warm("b", machine_b(), {"--device", "no such device"})["programs"], 0);
  EXPECT_EQ(warm("b", machine_b(), {"--app", "no-such-app"})["programs"], 0);
  nlohmann::json one = warm("b", machine_b(), {"--key", one_key.substr(0, 8)});
  EXPECT_EQ(one["programs"], 1) << one.dump(2);
  EXPECT_EQ(one["built"], 1);
  ASSERT_EQ(one["results"].size(), 1u);
  EXPECT_EQ(one["results"][0]["recorded_keys"][0], one_key);
  nlohmann::json both = warm("b", machine_b(), {"--app", "opencl_example", "--used-within", "1h"});
  EXPECT_EQ(both["programs"], 2) << both.dump(2);
  EXPECT_EQ(both["built"], 1);
  EXPECT_EQ(both["already_warm"], 1);
}

TEST_F(RemoteWarm, StoreInputsOffSendsNoSourceToTheServer) {
  CachedRun a = run_app("a", {{"JITCACHE_STORE_INPUTS", "0"}});
  ASSERT_EQ(a.verdicts["miss"], 2);
  EXPECT_TRUE(names_of("inputs").empty());
  EXPECT_TRUE(names_of("program").empty());
  EXPECT_FALSE(any_value_contains(kKernelLine));
  EXPECT_EQ(warm("b", machine_b())["programs"], 0);

  // The same search finds the source once a node records inputs: the check above is not vacuous.
  ASSERT_EQ(run_app("c", {{"JITCACHE_REMOTE_PREFIX", "other"}}).verdicts["miss"], 2);
  EXPECT_TRUE(any_value_contains(kKernelLine));
}

TEST_F(RemoteWarm, TamperedSignedRecordsAreRefusedWithTheReason) {
  const Env signing = {{"JITCACHE_REMOTE_HMAC_KEY", "cluster-secret"}};
  RunResult plain = run_plain({OPENCL_EXAMPLE, "--kernels", kernels.string()});
  ASSERT_EQ(run_app("a", signing).verdicts["miss"], 2);
  std::vector<std::string> inputs = names_of("inputs"), programs = names_of("program");
  ASSERT_EQ(inputs.size(), 2u);
  ASSERT_EQ(programs.size(), 2u);
  // One input record gets a flipped byte; a summary of a program nobody built is forged by
  // someone without the key.
  std::string flipped = *server.get(inputs[0]);
  flipped[flipped.size() / 2] ^= 0x20;
  server.set(inputs[0], flipped);
  const Digest128 forged{0x1234, 0x5678};
  const std::string forged_name = programs[0].substr(0, programs[0].rfind(':') + 1) + forged.hex();
  server.set(forged_name, remote_framing::encode_blob("JCP1", forged, "{}", "attacker-key"));

  Env b_env = machine_b();
  b_env.insert(signing.begin(), signing.end());
  int exit_code = 0;
  nlohmann::json report = warm("b", b_env, {}, &exit_code);
  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(report["programs"], 2) << report.dump(2);
  EXPECT_EQ(report["built"], 1) << report.dump(2);
  ASSERT_EQ(report["failed"], 1) << report.dump(2);
  for (const auto& row : report["results"]) {
    if (row["outcome"] != "failed") continue;
    EXPECT_NE(row["reason"].get<std::string>().find("bad_hmac"), std::string::npos) << row.dump();
  }
  bool forged_refused = false;
  for (const auto& row : report["not_replayable"]) {
    forged_refused |= row["key"] == forged_name && row["reason"].get<std::string>().find("bad_hmac") != std::string::npos;
  }
  EXPECT_TRUE(forged_refused) << report.dump(2);

  CachedRun b = run_app("b", b_env);  // the refused program is built by the app, correctly
  expect_correct(b, plain.out);
  EXPECT_EQ(b.verdicts["hit"], 1);
  EXPECT_EQ(b.verdicts["miss"], 1);
}

TEST_F(RemoteWarm, AnUnsignedRecordOfOtherBytesOrOverTheCapIsRefused) {
  ASSERT_EQ(run_app("a").verdicts["miss"], 2);
  std::vector<std::string> inputs = names_of("inputs");
  ASSERT_EQ(inputs.size(), 2u);
  // Record 0 is replaced by record 1's bytes, framed with a correct checksum under record 0's
  // name; record 1 by 17 MiB.
  const std::string other = *server.get(inputs[1]);
  const std::string payload = other.substr(32, other.size() - 32 - 16);  // blob header, checksum
  const Digest128 name0 = *Digest128::from_hex(inputs[0].substr(inputs[0].rfind(':') + 1));
  server.set(inputs[0], remote_framing::encode_blob("JCI1", name0, payload, ""));
  server.set(inputs[1], std::string(17u << 20, 'x'));

  int exit_code = 0;
  nlohmann::json report = warm("b", machine_b(), {}, &exit_code);
  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(report["built"], 0) << report.dump(2);
  ASSERT_EQ(report["failed"], 2) << report.dump(2);
  std::set<std::string> reasons;
  for (const auto& row : report["results"]) {
    const std::string reason = row["reason"].get<std::string>();
    if (reason.find("do not hash to its name") != std::string::npos) reasons.insert("digest");
    if (reason.find("cap") != std::string::npos) reasons.insert("size");
  }
  EXPECT_EQ(reasons, (std::set<std::string>{"digest", "size"})) << report.dump(2);
  EXPECT_TRUE(entry_files(cache("b")).empty());
}

// A Level Zero module (SPIR-V, build flags, spec constants) published by A is warmed on B, whose
// test driver reports another version (another compiler identity), then B's run is a hit.
TEST_F(RemoteWarm, ALevelZeroModuleIsWarmedFromTheRemoteToo) {
  const std::vector<std::string> app = {LEVEL_ZERO_EXAMPLE, "--scale", "4", "--flags", "-ze-opt-level=2"};
  const Env driver = {{"ZE_ENABLE_ALT_DRIVERS", LEVEL_ZERO_TEST_DRIVER}};
  Env b_driver = driver;
  b_driver["JITCACHE_TEST_ZE_DRIVER_VERSION"] = "1001";
  auto run_module = [&](const std::string& machine, const Env& extra) { return run_on(machine, app, extra); };
  CachedRun a = run_module("a", driver);
  ASSERT_EQ(a.result.exit_code, 0) << a.result.err;
  ASSERT_EQ(a.verdicts["miss"], 1);
  EXPECT_EQ(names_of("inputs").size(), 1u);

  nlohmann::json report = warm("b", b_driver);
  EXPECT_EQ(report["built"], 1) << report.dump(2);
  EXPECT_EQ(report["failed"], 0) << report.dump(2);

  RunOptions plain;
  plain.env = b_driver;
  plain.unset = {"LD_PRELOAD"};
  RunResult expected = run(app, plain);
  CachedRun b = run_module("b", b_driver);
  EXPECT_EQ(b.result.exit_code, 0) << b.result.err;
  EXPECT_EQ(b.result.out, expected.out);
  EXPECT_EQ(b.verdicts["hit"], 1);
  ASSERT_EQ(b.traces.size(), 1u);
  EXPECT_EQ(b.traces[0]["tier"], "disk");
  EXPECT_NE(b.traces[0]["key"], a.traces.at(0)["key"]);
}

// One server, two kinds of machines: B has PoCL but no Level Zero driver. The module A built on
// the Level Zero driver is for devices not here: reported as such, not as a failure.
TEST_F(RemoteWarm, ProgramsForDevicesNotHereAreNotFailures) {
  ASSERT_EQ(run_app("a").verdicts["miss"], 2);
  RunOptions module;
  module.env = env("a", {{"ZE_ENABLE_ALT_DRIVERS", LEVEL_ZERO_TEST_DRIVER}, {"LD_PRELOAD", JITCACHE_LIBRARY}});
  ASSERT_EQ(run({LEVEL_ZERO_EXAMPLE}, module).exit_code, 0);
  ASSERT_EQ(names_of("program").size(), 3u);

  int exit_code = -1;
  nlohmann::json report = warm("b", machine_b(), {}, &exit_code);
  EXPECT_EQ(exit_code, 0) << report.dump(2);
  EXPECT_EQ(report["programs"], 3) << report.dump(2);
  EXPECT_EQ(report["built"], 2);
  EXPECT_EQ(report["no_device"], 1);
  EXPECT_EQ(report["failed"], 0);
  for (const auto& row : report["results"]) {
    if (row["outcome"] == "no_device") {
      EXPECT_NE(row["reason"].get<std::string>().find("Level Zero"), std::string::npos) << row.dump();
    }
  }
}

}  // namespace
}  // namespace jitcache::testing
