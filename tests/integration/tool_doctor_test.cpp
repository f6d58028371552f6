// `jitcache doctor` against the real drivers and a real redis-server: the compiler identity it
// shows for each device is the one a build there is keyed with (the trace of a real build under
// jitcache run, on PoCL through the ICD loader, and on the Level Zero test driver), and its remote
// check tells whether this node and the records on the server are signed alike.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "redis_server.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ToolDoctor : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";

  RunResult tool(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
    args.insert(args.begin(), {JITCACHE_TOOL, "--dir", cache.string()});
    RunOptions options;
    options.env = {{"POCL_KERNEL_CACHE", "0"}};
    for (const auto& [name, value] : env) options.env[name] = value;
    options.unset = {"LD_PRELOAD", "JITCACHE_DIR", "JITCACHE_TRACE", "JITCACHE_REMOTE", "JITCACHE_REMOTE_HMAC_KEY",
                     "ZE_ENABLE_ALT_DRIVERS"};
    options.cache_root = cache;  // `run` apps leave capture helpers: wait for them (test_support.hpp)
    return run(args, options);
  }

  json doctor(const std::map<std::string, std::string>& env = {}, int expected_exit = 0) {
    RunResult result = tool({"doctor", "--json"}, env);
    EXPECT_EQ(result.exit_code, expected_exit) << result.out << result.err;
    json parsed = json::parse(result.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << result.out;
    return parsed;
  }

  // The compiler component of the first trace a traced run under `jitcache run` left.
  json traced_compiler(const std::vector<std::string>& app, const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> args = {"run", "--trace", "--trace-dir", (tmp / "traces").string(), "--"};
    args.insert(args.end(), app.begin(), app.end());
    RunResult result = tool(args, env);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    std::vector<json> traces = read_traces(tmp / "traces");
    if (traces.empty()) return nullptr;
    return {{"device", traces[0]["device"]}, {"component", traces[0]["components"]["compiler"]}};
  }
};

std::vector<json> checks_named(const json& report, const std::string& check) {
  std::vector<json> found;
  for (const json& item : report["checks"]) {
    if (item["check"] == check) found.push_back(item);
  }
  return found;
}

// The "compiler" finding of `api` for the device called `device`, or null.
json identity_of(const json& report, const std::string& api, const std::string& device) {
  for (const json& item : checks_named(report, "compiler")) {
    if (item["identity"]["api"] == api && item["identity"]["device"] == device) return item["identity"];
  }
  return nullptr;
}

TEST_F(ToolDoctor, ShowsTheCompilerIdentityAPoclBuildIsKeyedWith) {
  const json traced = traced_compiler({OPENCL_EXAMPLE, "--kernels", EXAMPLE_KERNELS});
  ASSERT_FALSE(traced.is_null());
  const json report = doctor();
  const json identity = identity_of(report, "opencl", traced["device"]);
  ASSERT_FALSE(identity.is_null()) << "no identity for " << traced["device"] << " in " << report.dump(1);
  EXPECT_EQ(identity["digest"], traced["component"]["digest"]);
  EXPECT_EQ(identity["value"], traced["component"]["value"]);

  // PoCL's own library is named, with what identifies its file.
  bool pocl = false;
  for (const json& library : identity["value"]["libraries"]) {
    if (library["path"].get<std::string>().find("libpocl.so") == std::string::npos) continue;
    pocl = true;
    EXPECT_TRUE(!library["build_id"].get<std::string>().empty() || library["size"].get<std::uint64_t>() > 0)
        << library.dump();
  }
  EXPECT_TRUE(pocl) << identity.dump(1);
  EXPECT_NE(identity["value"]["versions"].dump().find("PoCL"), std::string::npos) << identity.dump(1);

  // The human report says the same.
  RunResult text = tool({"doctor"});
  EXPECT_NE(text.out.find("libpocl.so"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("build-id"), std::string::npos) << text.out;
}

// Packs and the remote reach apps through libjitcache-tiers.so next to the shim (issue 19).
TEST_F(ToolDoctor, NamesTheTiersLibraryNextToTheShimAndWarnsWhenItIsMissing) {
  std::vector<json> tiers = checks_named(doctor(), "tiers library");
  ASSERT_EQ(tiers.size(), 1u);
  EXPECT_EQ(tiers[0]["status"], "ok") << tiers[0];
  const fs::path plugin = tiers[0]["detail"].get<std::string>();
  EXPECT_EQ(plugin.filename(), "libjitcache-tiers.so");
  ASSERT_TRUE(fs::is_regular_file(plugin)) << plugin;

  fs::create_directories(tmp / "alone");  // the shim without it
  fs::copy_file(plugin.parent_path() / "libjitcache.so", tmp / "alone" / "libjitcache.so");
  tiers = checks_named(doctor({{"JITCACHE_LIBRARY", (tmp / "alone" / "libjitcache.so").string()}}), "tiers library");
  ASSERT_EQ(tiers.size(), 1u);
  EXPECT_EQ(tiers[0]["status"], "warn") << tiers[0];
  EXPECT_NE(tiers[0]["detail"].get<std::string>().find("JITCACHE_PACKS"), std::string::npos) << tiers[0];
}

TEST_F(ToolDoctor, ShowsTheCompilerIdentityALevelZeroBuildIsKeyedWith) {
  const std::map<std::string, std::string> driver = {{"ZE_ENABLE_ALT_DRIVERS", LEVEL_ZERO_TEST_DRIVER}};
  const json traced = traced_compiler({LEVEL_ZERO_EXAMPLE}, driver);
  ASSERT_FALSE(traced.is_null());
  const json identity = identity_of(doctor(driver), "level_zero", traced["device"]);
  ASSERT_FALSE(identity.is_null());
  // Equal only if the OpenCL stack the doctor also asked left nothing in this identity.
  EXPECT_EQ(identity["digest"], traced["component"]["digest"]) << identity.dump(1);
  EXPECT_NE(identity["value"].dump().find(fs::path(LEVEL_ZERO_TEST_DRIVER).filename().string()), std::string::npos);
}

// A file:// remote: who the directory trusts, its setgid bit, free space; a world-writable one
// without a key fails, naming the setting that would make it safe.
TEST_F(ToolDoctor, ASharedDirectoryRemoteIsCheckedForTrustAndSpace) {
  const fs::path shared = tmp / "shared";
  fs::create_directories(shared);
  const std::map<std::string, std::string> env = {{"JITCACHE_REMOTE", "file://" + shared.string()}};
  ASSERT_EQ(::chmod(shared.c_str(), 0775), 0);
  json report = doctor(env);
  ASSERT_EQ(checks_named(report, "remote").size(), 1u) << report.dump(1);
  EXPECT_EQ(checks_named(report, "remote")[0]["status"], "ok") << report.dump(1);
  std::vector<json> directory = checks_named(report, "remote directory");
  ASSERT_EQ(directory.size(), 1u) << report.dump(1);
  EXPECT_EQ(directory[0]["status"], "warn");
  EXPECT_NE(directory[0]["fix"].get<std::string>().find("chmod g+s"), std::string::npos) << directory[0].dump();
  EXPECT_EQ(checks_named(report, "remote space").size(), 1u) << report.dump(1);

  ASSERT_EQ(::chmod(shared.c_str(), 02775), 0);
  directory = checks_named(doctor(env), "remote directory");
  ASSERT_EQ(directory.size(), 1u);
  EXPECT_EQ(directory[0]["status"], "ok") << directory[0].dump();

  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  report = doctor(env, 1);
  ASSERT_EQ(checks_named(report, "remote").size(), 1u) << report.dump(1);
  EXPECT_EQ(checks_named(report, "remote")[0]["status"], "fail");
  EXPECT_NE(checks_named(report, "remote")[0]["detail"].get<std::string>().find("remote_hmac_key"), std::string::npos)
      << report.dump(1);
}

// ---- HMAC on both ends -----------------------------------------------------------------------

class ToolDoctorRemote : public ToolDoctor {
 protected:
  RedisServer server;

  std::map<std::string, std::string> node(const std::string& hmac_key) {
    std::map<std::string, std::string> env = {{"JITCACHE_REMOTE", server.url()}};
    if (!hmac_key.empty()) env["JITCACHE_REMOTE_HMAC_KEY"] = hmac_key;
    return env;
  }

  // A node builds the example and publishes its records (its own fresh local cache).
  void publish_from(const std::string& hmac_key) {
    TempDir other;
    std::map<std::string, std::string> env = node(hmac_key);
    env["JITCACHE_DIR"] = other.path().string();
    RunOptions options;
    options.env = env;
    options.env["POCL_KERNEL_CACHE"] = "0";
    options.unset = {"LD_PRELOAD", "JITCACHE_TRACE"};
    if (hmac_key.empty()) options.unset.push_back("JITCACHE_REMOTE_HMAC_KEY");
    RunResult result = run({JITCACHE_TOOL, "run", "--", OPENCL_EXAMPLE, "--kernels", EXAMPLE_KERNELS}, options);
    ASSERT_EQ(result.exit_code, 0) << result.err;
  }

  json signing(const json& report) {
    std::vector<json> found = checks_named(report, "remote signing");
    return found.empty() ? json() : found[0];
  }
};

TEST_F(ToolDoctorRemote, SigningNodeSeesUnsignedRecordsOfOthersAsAMismatch) {
  publish_from("");  // a node without a key
  const json report = doctor(node("cluster-secret"), 1);
  const json check = signing(report);
  EXPECT_EQ(check["status"], "fail") << report.dump(1);
  EXPECT_NE(check["detail"].get<std::string>().find("nodes without a key"), std::string::npos) << check.dump();
  EXPECT_NE(check["fix"].get<std::string>().find("JITCACHE_REMOTE_HMAC_KEY"), std::string::npos);
  EXPECT_EQ(report.dump().find("cluster-secret"), std::string::npos) << "the key must never be shown";

  // Once this key's nodes have records too, both kinds are there: a warning, not a failure.
  publish_from("cluster-secret");
  const json both = signing(doctor(node("cluster-secret")));
  EXPECT_EQ(both["status"], "warn") << both.dump();
}

TEST_F(ToolDoctorRemote, UnsignedNodeSeesSignedRecordsOfOthersAsAMismatch) {
  publish_from("cluster-secret");
  const json check = signing(doctor(node(""), 1));
  EXPECT_EQ(check["status"], "fail") << check.dump();
  EXPECT_NE(check["detail"].get<std::string>().find("does not sign"), std::string::npos) << check.dump();
}

TEST_F(ToolDoctorRemote, NodesThatSignAlikeAreFineAndAForgedRecordIsNamed) {
  publish_from("cluster-secret");
  json report = doctor(node("cluster-secret"));
  EXPECT_EQ(signing(report)["status"], "ok") << report.dump(1);
  ASSERT_EQ(checks_named(report, "remote record").size(), 1u) << report.dump(1);
  EXPECT_EQ(checks_named(report, "remote record")[0]["status"], "ok");

  // Someone without the key overwrites the signed records: the one doctor reads back is refused.
  for (const std::string& name : server.keys("jitcache:hmac-*")) server.set(name, "not a record");
  report = doctor(node("cluster-secret"), 1);
  const std::vector<json> record = checks_named(report, "remote record");
  ASSERT_EQ(record.size(), 1u) << report.dump(1);
  EXPECT_EQ(record[0]["status"], "fail");
}

}  // namespace
}  // namespace jitcache::testing
