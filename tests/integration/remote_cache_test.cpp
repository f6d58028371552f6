// Two or more "machines" (separate cache dirs) sharing one real redis-server (or nginx, or a
// directory) through the remote tier, running the OpenCL example under LD_PRELOAD on real PoCL.
// PoCL's own cache is off.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <thread>

#include "hashing/digest.hpp"
#include "nginx_server.hpp"
#include "redis_server.hpp"
#include "s3_server.hpp"
#include "store/remote/remote_record.hpp"
#include "store/remote/signed_entry.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

using MachineRun = CachedRun;

class RemoteCache : public ::testing::Test {
 protected:
  TempDir tmp;
  std::atomic<int> runs{0};

  // One run of the example on "machine" `name` (its own cache dir) against `remote`.
  MachineRun run_on(const std::string& name, const std::string& remote, std::map<std::string, std::string> extra = {},
                    std::vector<std::string> args = {}) {
    fs::path trace_dir = tmp / ("traces-" + name + "-" + std::to_string(++runs));
    RunOptions options;
    options.env = {{"LD_PRELOAD", JITCACHE_LIBRARY},
                   {"JITCACHE_DIR", cache(name).string()},
                   {"JITCACHE_TRACE", "1"},
                   {"JITCACHE_TRACE_DIR", trace_dir.string()},
                   {"JITCACHE_REMOTE", remote},
                   // Generous bounds: a loopback server on a loaded 2-core CI machine can be slow,
                   // and a spurious timeout would turn a remote hit into a (correct) local build.
                   {"JITCACHE_REMOTE_CONNECT_TIMEOUT_MS", "5000"},
                   {"JITCACHE_REMOTE_TIMEOUT_MS", "5000"},
                   // A back-off longer than any run: a slow run must not retry and count twice.
                   {"JITCACHE_REMOTE_BACKOFF", "1h"},
                   // These tests count one process's calls to the remote: a capture helper (the
                   // default on PoCL) would add its own calls to the counters.
                   {"JITCACHE_CAPTURE", "build"},
                   {"POCL_KERNEL_CACHE", "0"}};
    for (auto& [variable, value] : extra) options.env[variable] = value;
    args.insert(args.begin(), OPENCL_EXAMPLE);
    return run_traced(args, options, trace_dir);
  }

  fs::path cache(const std::string& name) const { return tmp / ("cache-" + name); }

  nlohmann::json stats(const std::string& name) const {
    return nlohmann::json::parse(read_text(cache(name) / "stats.json"), nullptr, false);
  }

  std::string plain_output() {
    RunResult plain = run_plain({OPENCL_EXAMPLE});
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    return plain.out;
  }

  // Machine A compiles both programs and publishes them (`published` counts them on the server);
  // machine B, with a disk of its own, then gets both from the remote.
  struct TwoMachines {
    MachineRun a, b;
  };
  TwoMachines expect_b_gets_what_a_compiled(const std::string& remote, const std::string& plain,
                                            const std::function<std::size_t()>& published,
                                            const std::map<std::string, std::string>& extra = {});

  void expect_each_key_compiled_once(const std::string& remote);

  // A directory standing for the team's shared file system (file:// remote).
  fs::path shared_dir() {
    fs::path shared = tmp / "shared";
    fs::create_directories(shared);
    return shared;
  }

  // The entries' records "<prefix>:<32 hex>": not leases, input records or program summaries.
  static std::vector<std::string> records(RedisServer& server, const std::string& prefix = "jitcache") {
    std::vector<std::string> names;
    for (const std::string& name : server.keys(prefix + ":*")) {
      std::string rest = name.substr(prefix.size() + 1);  // "<key>" or "hmac-<tag>:<key>" (signed)
      if (rest.starts_with("hmac-") && rest.find(':') != std::string::npos) rest = rest.substr(rest.find(':') + 1);
      if (rest.size() == 32 && rest.find(':') == std::string::npos) names.push_back(name);
    }
    return names;
  }
};

std::int64_t counter(const nlohmann::json& stats, const char* name) {
  return stats.is_object() ? stats.value(name, std::int64_t{0}) : 0;
}

void expect_correct(const MachineRun& run, const std::string& plain) {
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.out, plain);
  EXPECT_NE(run.result.out.find("all results correct"), std::string::npos);
}

RemoteCache::TwoMachines RemoteCache::expect_b_gets_what_a_compiled(const std::string& remote, const std::string& plain,
                                                                   const std::function<std::size_t()>& published,
                                                                   const std::map<std::string, std::string>& extra) {
  TwoMachines runs{run_on("a", remote, extra), {}};
  expect_correct(runs.a, plain);
  EXPECT_EQ(runs.a.verdicts["miss"], 2);
  for (const auto& trace : runs.a.traces) EXPECT_EQ(trace["remote"]["status"], "miss");
  EXPECT_EQ(published(), 2u);
  EXPECT_EQ(counter(stats("a"), "remote_stores"), 2);
  runs.b = run_on("b", remote, extra);
  expect_correct(runs.b, plain);
  EXPECT_EQ(runs.b.verdicts["hit"], 2);
  for (const auto& trace : runs.b.traces) {
    EXPECT_EQ(trace["tier"], "remote");
    EXPECT_EQ(trace["remote"]["status"], "ok");
  }
  EXPECT_EQ(counter(stats("b"), "hits_remote"), 2);
  return runs;
}

// The entry records nginx holds, "<ns>/<2 hex>/<30 hex>": not input records or program summaries.
std::vector<std::string> http_records(const NginxServer& server) {
  std::vector<std::string> names;
  for (const std::string& file : server.files()) {
    fs::path path(file);
    if (path.filename().string().size() == 30 && path.parent_path().filename().string().size() == 2) names.push_back(file);
  }
  return names;
}

int count_warnings(const std::string& err) {
  int warnings = 0;
  for (size_t at = 0; (at = err.find("jitcache: warning", at)) != std::string::npos; ++at) ++warnings;
  return warnings;
}

TEST_F(RemoteCache, MachineBGetsRemoteHitsForWhatMachineACompiled) {
  RedisServer server;
  std::string plain = plain_output();

  TwoMachines runs = expect_b_gets_what_a_compiled(server.url(), plain, [&] { return records(server).size(); });
  for (const auto& trace : runs.a.traces) EXPECT_EQ(trace["remote"]["lease"], "acquired");
  EXPECT_EQ(entry_files(cache("b")).size(), 2u);  // remote hits land on B's disk

  MachineRun b_again = run_on("b", server.url());
  expect_correct(b_again, plain);
  EXPECT_EQ(b_again.verdicts["hit"], 2);
  for (const auto& trace : b_again.traces) {
    EXPECT_EQ(trace["tier"], "disk");
    EXPECT_TRUE(trace["remote"].is_null());  // a disk hit never asks the network
  }
}

TEST_F(RemoteCache, ReadOnlyConsumerServesHitsAndWritesNothingInItsNamespace) {
  RedisServer server;
  std::string plain = plain_output();
  const std::map<std::string, std::string> team = {{"JITCACHE_REMOTE_PREFIX", "team1"}};
  std::map<std::string, std::string> consumer = team;
  consumer["JITCACHE_REMOTE_READ_ONLY"] = "1";
  MachineRun cold = run_on("consumer", server.url(), consumer);
  expect_correct(cold, plain);
  EXPECT_EQ(cold.verdicts["miss"], 2);
  EXPECT_TRUE(server.keys("*").empty());  // no record and no lease

  expect_correct(run_on("producer", server.url(), team), plain);
  EXPECT_EQ(records(server, "team1").size(), 2u);
  EXPECT_EQ(run_on("other-team", server.url()).verdicts["miss"], 2);  // default prefix: another cache
  MachineRun warm = run_on("consumer2", server.url(), consumer);
  expect_correct(warm, plain);
  EXPECT_EQ(warm.verdicts["hit"], 2);
}

TEST_F(RemoteCache, ServerKilledMidRunLeavesTheAppCorrect) {
  RedisServer server;
  std::string plain = plain_output();
  fs::path fifo = tmp / "pause";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);

  MachineRun run_result;
  std::thread app([&] { run_result = run_on("a", server.url(), {}, {"--pause-fifo", fifo.string()}); });
  {
    std::ofstream resume(fifo);  // opens once the app has built its first program and waits
    // The first program's record reaches the server in the background, and after it the last call
    // of that publish (the program summary, written after the lease is released); then the server
    // dies. Killed earlier, that call is the one that fails, and the second program's lookup is
    // skipped by the back-off instead of failing.
    EXPECT_TRUE(wait_until([&] {
      return records(server).size() == 1 && server.keys("*:lease").empty() && server.keys("*:program:*").size() == 1;
    }));
    server.kill();
  }  // closing the FIFO lets the app build its second program
  app.join();

  expect_correct(run_result, plain);
  ASSERT_EQ(run_result.traces.size(), 2u);
  std::map<std::string, std::string> remote_status;
  for (const auto& trace : run_result.traces) {
    remote_status[trace["components"]["options"]["value"].get<std::string>().empty() ? "integer_ops" : "vector_math"] =
        trace["remote"]["status"];
  }
  EXPECT_EQ(remote_status["vector_math"], "miss");
  EXPECT_EQ(remote_status["integer_ops"], "error");  // the server is gone: refused/reset, not a hang
  nlohmann::json counters = stats("a");
  EXPECT_EQ(counter(counters, "remote_errors"), 1);          // costs one failed call ...
  EXPECT_GE(counter(counters, "remote_skipped"), 1);         // ... then the store is skipped (back-off)
  EXPECT_EQ(counter(counters, "remote_stores"), 1);
  EXPECT_EQ(entry_files(cache("a")).size(), 2u);           // the disk tier is unaffected
  EXPECT_LE(count_warnings(run_result.result.err), 1) << run_result.result.err;
}

// capture = release parks a missed build until the app releases the program, unless someone waits
// for it; other machines may wait on this process's lease, unseen, so a leased build is published
// at once.
TEST_F(RemoteCache, CaptureAtReleaseStillPublishesALeasedBuildAtOnce) {
  RedisServer server;
  std::string plain = plain_output();
  fs::path fifo = tmp / "pause";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);

  MachineRun run_result;
  std::thread app([&] {
    run_result = run_on("a", server.url(), {{"JITCACHE_CAPTURE", "release"}}, {"--pause-fifo", fifo.string()});
  });
  {
    std::ofstream resume(fifo);  // opens once the app has built its first program and holds it
    EXPECT_TRUE(wait_until([&] { return records(server).size() == 1 && server.keys("*:lease").empty(); }));
  }
  app.join();
  expect_correct(run_result, plain);
  EXPECT_EQ(records(server).size(), 2u);
}

TEST_F(RemoteCache, HungServerCostsOneTimeoutThenIsSkipped) {
  RedisServer server;
  std::string plain = plain_output();
  server.pause();  // accepts connections (kernel backlog) but never answers
  MachineRun hung = run_on("a", server.url(), {{"JITCACHE_REMOTE_TIMEOUT_MS", "300"}},
                          {"--rebuild-options", "-DOFFSET=9"});
  server.resume();
  EXPECT_EQ(hung.result.exit_code, 0) << hung.result.err;
  EXPECT_NE(hung.result.out.find("all results correct"), std::string::npos);
  ASSERT_EQ(hung.traces.size(), 3u);
  std::map<std::string, int> statuses;
  for (const auto& trace : hung.traces) ++statuses[trace["remote"]["status"].get<std::string>()];
  EXPECT_EQ(statuses["timeout"], 1);  // only the first lookup waits for the bound ...
  EXPECT_EQ(statuses["skipped"], 2);  // ... the others do not ask during the back-off
  nlohmann::json counters = stats("a");
  EXPECT_EQ(counter(counters, "remote_timeouts"), 1);
  EXPECT_EQ(counter(counters, "remote_skipped"), 2 + 3);  // two lookups, three background stores
  EXPECT_LE(count_warnings(hung.result.err), 1) << hung.result.err;
}

// Issue 14.7: a lease left by a node that died holds every build of its key for
// remote_lease_wait; the wait is announced once on stderr, then the node builds itself.
TEST_F(RemoteCache, StaleLeaseWaitIsAnnouncedOnceThenBuiltHere) {
  RedisServer server;
  std::string plain = plain_output();
  MachineRun learn = run_on("learn", "");  // no remote: only to learn the keys
  ASSERT_FALSE(learn.traces.empty());
  const std::string key = learn.traces.front()["key"].get<std::string>();
  server.set("jitcache:" + key + ":lease", "a-node-that-died");
  MachineRun waited = run_on("a", server.url(), {{"JITCACHE_REMOTE_LEASE_WAIT", "2"}});
  expect_correct(waited, plain);
  const std::string notice =
      "another node building the same program (its remote lease) (bounded by JITCACHE_REMOTE_LEASE_WAIT)";
  size_t notices = 0;
  for (size_t at = 0; (at = waited.result.err.find(notice, at)) != std::string::npos; ++at) ++notices;
  EXPECT_EQ(notices, 1u) << waited.result.err;
  int timed_out = 0;
  for (const auto& trace : waited.traces) {
    if (trace["key"] == key) timed_out += trace["remote"]["lease"] == "wait_timed_out";
  }
  EXPECT_EQ(timed_out, 1);
}

TEST_F(RemoteCache, WrongPasswordMeansUncachedRemoteOneWarningCorrectApp) {
  RedisServer server("right-secret");
  std::string plain = plain_output();
  MachineRun wrong = run_on("a", server.url_with_password("wrong-secret"));
  expect_correct(wrong, plain);
  EXPECT_EQ(wrong.verdicts["miss"], 2);
  EXPECT_EQ(count_warnings(wrong.result.err), 1) << wrong.result.err;
  EXPECT_NE(wrong.result.err.find("AUTH"), std::string::npos) << wrong.result.err;
  EXPECT_EQ(wrong.result.err.find("wrong-secret"), std::string::npos);  // never print the password
  EXPECT_TRUE(server.keys("*").empty());
  nlohmann::json counters = stats("a");
  EXPECT_EQ(counter(counters, "remote_errors"), 1);  // refused once, then off for the process
  EXPECT_EQ(entry_files(cache("a")).size(), 2u);

  MachineRun right = run_on("b", server.url());
  expect_correct(right, plain);
  EXPECT_EQ(records(server).size(), 2u);
}

TEST_F(RemoteCache, TamperedRecordsAreRejectedWithHmacAndRebuilt) {
  RedisServer server;
  std::string plain = plain_output();
  const std::map<std::string, std::string> signing = {{"JITCACHE_REMOTE_HMAC_KEY", "cluster-secret"}};
  expect_correct(run_on("a", server.url(), signing), plain);
  std::vector<std::string> names = records(server);
  ASSERT_EQ(names.size(), 2u);

  // One record gets a flipped byte; the other is forged by someone without the key: a different
  // binary with a correct checksum, signed with the attacker's key.
  std::string flipped = *server.get(names[0]);
  flipped[flipped.size() / 2] ^= 0x20;
  server.set(names[0], flipped);
  Digest128 forged_key = *Digest128::from_hex(names[1].substr(names[1].rfind(':') + 1));
  server.set(names[1], encode_record(forged_key, std::string(4096, 'x'), nlohmann::json::object(), "attacker-key"));

  MachineRun b = run_on("b", server.url(), signing);
  expect_correct(b, plain);
  EXPECT_EQ(b.verdicts["miss"], 2);
  for (const auto& trace : b.traces) EXPECT_EQ(trace["remote"]["status"], "bad_hmac");
  EXPECT_EQ(counter(stats("b"), "remote_hmac_rejects"), 2);
  EXPECT_LE(count_warnings(b.result.err), 1);

  MachineRun c = run_on("c", server.url(), signing);  // B rebuilt and re-signed both
  expect_correct(c, plain);
  EXPECT_EQ(c.verdicts["hit"], 2);
  for (const auto& trace : c.traces) EXPECT_EQ(trace["tier"], "remote");
}

// Eight cold processes, four on each of two machines, on one remote: each key is compiled once in
// all (the remote's lease across machines, the build lock within one).
void RemoteCache::expect_each_key_compiled_once(const std::string& remote) {
  std::string plain = plain_output();
  std::vector<MachineRun> results(8);
  std::vector<std::thread> processes;
  for (int i = 0; i < 8; ++i) {
    // Each process gets its own PoCL scratch dir from run() (PoCL 3.1 collides in a shared one).
    processes.emplace_back([&, i] {
      results[i] = run_on(i % 2 ? "a" : "b", remote,
                          {// On a loaded machine 8 PoCL builds can take long: wait for the builder.
                           {"JITCACHE_REMOTE_LEASE_WAIT", "10m"},
                           {"JITCACHE_REMOTE_LEASE_TTL", "10m"}});
    });
  }
  for (std::thread& process : processes) process.join();

  std::map<std::string, int> misses_per_key, lookups_per_key, remote_hits_per_key;
  for (const MachineRun& machine : results) {
    expect_correct(machine, plain);
    EXPECT_EQ(machine.traces.size(), 2u) << machine.result.err;
    for (const auto& trace : machine.traces) {
      ++lookups_per_key[trace["key"].get<std::string>()];
      if (trace["verdict"] == "miss") ++misses_per_key[trace["key"].get<std::string>()];
      if (trace["tier"] == "remote") ++remote_hits_per_key[trace["key"].get<std::string>()];
    }
  }
  ASSERT_EQ(lookups_per_key.size(), 2u);
  for (const auto& [key, lookups] : lookups_per_key) {
    EXPECT_EQ(lookups, 8) << key;
    EXPECT_EQ(misses_per_key[key], 1) << key << ": compiled more than once";
    // The builder's machine reads the disk; on the other, the process holding the build lock
    // fetches the record and keeps the lock until it is on disk, where the others read it.
    EXPECT_EQ(remote_hits_per_key[key], 1) << key << ": fetched more than once";
  }
}

TEST_F(RemoteCache, EightColdProcessesOnTwoMachinesCompileEachKeyOnce) {
  RedisServer server;
  expect_each_key_compiled_once(server.url());
}

TEST_F(RemoteCache, OverHttpsMachineBGetsRemoteHitsForWhatMachineACompiled) {
  NginxServer server(NginxServer::Options::https());
  std::string plain = plain_output();
  const std::map<std::string, std::string> trust = {{"JITCACHE_REMOTE_CA_FILE", server.ca_file().string()}};
  TwoMachines runs =
      expect_b_gets_what_a_compiled(server.url(), plain, [&] { return http_records(server).size(); }, trust);
  EXPECT_EQ(count_warnings(runs.b.result.err), 0) << runs.b.result.err;
}

// The entry records s3rver holds ("<prefix>/<ns>/<2 hex>/<30 hex>", in its own file layout).
std::size_t s3_records(const S3Server& server) {
  std::size_t records = 0;
  constexpr std::string_view kSuffix = "._S3rver_object";
  for (const auto& item : fs::recursive_directory_iterator(server.data())) {
    const std::string name = item.path().filename().string();
    if (name.size() == 30 + kSuffix.size() && name.ends_with(kSuffix) &&
        item.path().parent_path().filename().string().size() == 2) {
      ++records;
    }
  }
  return records;
}

TEST_F(RemoteCache, OnS3MachineBGetsRemoteHitsForWhatMachineACompiled) {
  JITCACHE_SKIP_WITHOUT_S3RVER();
  S3Server server;
  std::string plain = plain_output();
  std::map<std::string, std::string> env = server.environment();
  env["JITCACHE_REMOTE_S3_SECRET_ACCESS_KEY"] = "secret-never-in-any-output";
  TwoMachines runs = expect_b_gets_what_a_compiled(server.url(), plain, [&] { return s3_records(server); }, env);
  EXPECT_EQ(count_warnings(runs.b.result.err), 0) << runs.b.result.err;
  for (const auto* run : {&runs.a, &runs.b}) {
    EXPECT_EQ(run->result.err.find("secret-never-in-any-output"), std::string::npos) << run->result.err;
    for (const auto& trace : run->traces) EXPECT_EQ(trace.dump().find("secret-never-in-any-output"), std::string::npos);
  }
}

TEST_F(RemoteCache, HttpTamperedRecordsAreRejectedWithHmacAndRebuilt) {
  NginxServer server;
  std::string plain = plain_output();
  const std::map<std::string, std::string> signing = {{"JITCACHE_REMOTE_HMAC_KEY", "cluster-secret"}};
  expect_correct(run_on("a", server.url(), signing), plain);
  std::vector<std::string> names = http_records(server);
  ASSERT_EQ(names.size(), 2u);
  for (const std::string& name : names) {
    std::string record = read_text(server.root() / name);
    record[record.size() / 2] ^= 0x20;
    write_text(server.root() / name, record);
  }
  MachineRun b = run_on("b", server.url(), signing);
  expect_correct(b, plain);
  EXPECT_EQ(b.verdicts["miss"], 2);
  for (const auto& trace : b.traces) EXPECT_EQ(trace["remote"]["status"], "bad_hmac");
  EXPECT_LE(count_warnings(b.result.err), 1);
  MachineRun c = run_on("c", server.url(), signing);  // B rebuilt and re-signed both
  expect_correct(c, plain);
  EXPECT_EQ(c.verdicts["hit"], 2);
}

TEST_F(RemoteCache, HungHttpServerCostsOneTimeoutThenIsSkipped) {
  NginxServer server;
  std::string plain = plain_output();
  server.pause();
  MachineRun hung = run_on("a", server.url(), {{"JITCACHE_REMOTE_TIMEOUT_MS", "300"}});
  server.resume();
  expect_correct(hung, plain);
  std::map<std::string, int> statuses;
  for (const auto& trace : hung.traces) ++statuses[trace["remote"]["status"].get<std::string>()];
  EXPECT_EQ(statuses["timeout"], 1);
  EXPECT_EQ(statuses["skipped"], 1);
  EXPECT_EQ(counter(stats("a"), "remote_timeouts"), 1);
  EXPECT_LE(count_warnings(hung.result.err), 1) << hung.result.err;
}

// Item 3 of issue 30: JITCACHE_REMOTE="redis://...|https://...". A hit from the second remote is
// written back to the first (after the driver loaded it), so the next host finds it there: when
// the record was signed, or the user opts in (issue 36.5: unsigned, it laundered a server the
// first remote's other users never chose into theirs).
TEST_F(RemoteCache, SeveralRemotesAreAskedInOrderAndALaterHitFillsTheEarlierOne) {
  RedisServer redis;
  NginxServer http;
  std::string plain = plain_output();
  expect_correct(run_on("a", http.url()), plain);
  EXPECT_EQ(http_records(http).size(), 2u);
  EXPECT_TRUE(records(redis).empty());

  const std::string both = redis.url() + "|" + http.url();
  MachineRun unsigned_hit = run_on("b0", both);
  expect_correct(unsigned_hit, plain);
  EXPECT_EQ(unsigned_hit.verdicts["hit"], 2);
  EXPECT_EQ(counter(stats("b0"), "remote_backfills"), 0);
  EXPECT_TRUE(records(redis).empty()) << "an unsigned hit of the second remote was copied into the first";

  MachineRun b = run_on("b", both, {{"JITCACHE_REMOTE_BACKFILL", "all"}});
  expect_correct(b, plain);
  EXPECT_EQ(b.verdicts["hit"], 2);
  for (const auto& trace : b.traces) {
    EXPECT_EQ(trace["tier"], "remote");
    EXPECT_EQ(trace["remote"]["remote"], 1);  // the second remote served it
  }
  EXPECT_EQ(counter(stats("b"), "remote_backfills"), 2);
  EXPECT_EQ(records(redis).size(), 2u);

  MachineRun c = run_on("c", both);
  expect_correct(c, plain);
  for (const auto& trace : c.traces) EXPECT_EQ(trace["remote"]["remote"], 0);  // now the first has it
  EXPECT_EQ(counter(stats("c"), "remote_backfills"), 0);

  // A build on a machine with both remotes is published to both.
  MachineRun d = run_on("d", both, {{"JITCACHE_REMOTE_PREFIX", "other"}});
  expect_correct(d, plain);
  EXPECT_EQ(records(redis, "other").size(), 2u);
  EXPECT_EQ(http_records(http).size(), 4u);

  // Signed records: a hit whose tag verified is backfilled by default.
  const std::map<std::string, std::string> signing = {{"JITCACHE_REMOTE_HMAC_KEY", "cluster-secret"},
                                                      {"JITCACHE_REMOTE_PREFIX", "signed"}};
  expect_correct(run_on("e", http.url(), signing), plain);
  MachineRun f = run_on("f", both, signing);
  expect_correct(f, plain);
  EXPECT_EQ(f.verdicts["hit"], 2);
  EXPECT_EQ(counter(stats("f"), "remote_backfills"), 2);
  EXPECT_EQ(records(redis, "signed").size(), 2u);
}

// ---- file:// (a shared directory; docs/remote.md, "Shared directories") -----------------------

// The entry files of a shared directory, "<ns>/<2 hex>/<2 hex>/<key>.entry".
std::vector<fs::path> shared_entries(const fs::path& shared) {
  std::vector<fs::path> entries;
  if (!fs::exists(shared)) return entries;
  for (const auto& item : fs::recursive_directory_iterator(shared)) {
    if (item.path().extension() == ".entry") entries.push_back(item.path());
  }
  return entries;
}

TEST_F(RemoteCache, OnASharedDirectoryMachineBGetsRemoteHitsForWhatMachineACompiled) {
  const fs::path shared = shared_dir();
  const std::string remote = "file://" + shared.string();
  std::string plain = plain_output();
  TwoMachines runs = expect_b_gets_what_a_compiled(remote, plain, [&] { return shared_entries(shared).size(); });
  for (const auto& trace : runs.a.traces) EXPECT_EQ(trace["remote"]["lease"], "acquired");
  EXPECT_EQ(count_warnings(runs.b.result.err), 0) << runs.b.result.err;
  EXPECT_EQ(entry_files(cache("b")).size(), 2u);  // remote hits land on B's disk
  // Nothing is left behind: no lease, no tmp file.
  for (const auto& item : fs::recursive_directory_iterator(shared)) {
    EXPECT_EQ(item.path().string().find(".tmp-"), std::string::npos) << item.path();
    EXPECT_NE(item.path().extension(), ".lease") << item.path();
  }
}

TEST_F(RemoteCache, OnASharedDirectoryEightColdProcessesOnTwoMachinesCompileEachKeyOnce) {
  expect_each_key_compiled_once("file://" + shared_dir().string());
}

TEST_F(RemoteCache, OnASharedDirectoryTamperedEntriesAreRejectedWithHmacAndRebuilt) {
  const fs::path shared = shared_dir();
  const std::string remote = "file://" + shared.string();
  std::string plain = plain_output();
  const std::map<std::string, std::string> signing = {{"JITCACHE_REMOTE_HMAC_KEY", "team-secret"}};
  expect_correct(run_on("a", remote, signing), plain);
  std::vector<fs::path> entries = shared_entries(shared);
  ASSERT_EQ(entries.size(), 2u);
  // Someone without the key re-frames each entry with a binary of their own and valid checksums.
  for (const fs::path& entry : entries) {
    Digest128 key = *Digest128::from_hex(entry.stem().string());
    write_text(entry, encode_shared_entry(key, "not the real binary", nlohmann::json::object(), "their-key"));
  }
  MachineRun b = run_on("b", remote, signing);
  expect_correct(b, plain);
  EXPECT_EQ(b.verdicts["miss"], 2);
  for (const auto& trace : b.traces) EXPECT_EQ(trace["remote"]["status"], "bad_hmac");
  EXPECT_EQ(counter(stats("b"), "remote_hmac_rejects"), 2);
}

// A directory this user can only read (here: a read-only mount; root could write anything else):
// hits are served, misses build locally, and the skipped writes are one note, not a warning each.
TEST_F(RemoteCache, AReadOnlySharedDirectoryServesHitsAndSkipsWritesWithOneNote) {
  if (::geteuid() != 0) GTEST_SKIP() << "a read-only mount needs root";
  const fs::path shared = shared_dir();
  if (::mount("tmpfs", shared.c_str(), "tmpfs", 0, "size=64m,mode=0755") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs CAP_SYS_ADMIN)";
  }
  struct Unmount {
    fs::path where;
    ~Unmount() { ::umount2(where.c_str(), MNT_DETACH); }
  } unmount{shared};
  const std::string remote = "file://" + shared.string();
  std::string plain = plain_output();
  expect_correct(run_on("producer", remote), plain);
  ASSERT_EQ(shared_entries(shared).size(), 2u);
  ASSERT_EQ(::mount(nullptr, shared.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0);

  const std::map<std::string, std::string> verbose = {{"JITCACHE_LOG", "info"}};
  MachineRun reader = run_on("reader", remote, verbose);
  expect_correct(reader, plain);
  EXPECT_EQ(reader.verdicts["hit"], 2) << reader.result.err;

  // Another team's prefix: nothing there, and nothing can be written.
  std::map<std::string, std::string> other = verbose;
  other["JITCACHE_REMOTE_PREFIX"] = "other-team";
  MachineRun cold = run_on("cold", remote, other);
  expect_correct(cold, plain);
  EXPECT_EQ(cold.verdicts["miss"], 2);
  EXPECT_EQ(count_warnings(cold.result.err), 0) << cold.result.err;
  std::size_t notes = 0;
  for (std::size_t at = 0; (at = cold.result.err.find("read-only for this user", at)) != std::string::npos; ++at) ++notes;
  EXPECT_EQ(notes, 1u) << cold.result.err;
  EXPECT_EQ(counter(stats("cold"), "remote_stores"), 0);
  EXPECT_EQ(entry_files(cache("cold")).size(), 2u);  // the local store is unaffected
}

}  // namespace
}  // namespace jitcache::testing
