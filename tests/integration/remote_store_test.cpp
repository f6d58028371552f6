// store/RedisRemote against a real redis-server, without an app: the lease protocol, refusals of
// foreign records, and the back-off after failures (no network traffic while backing off).
#include <gtest/gtest.h>

#include "redis_server.hpp"
#include "remote_clients.hpp"
#include "store/remote/redis_remote.hpp"
#include "store/remote/remote_record.hpp"

namespace jitcache::testing {
namespace {

const Digest128 kKey{1, 2};
const Digest128 kOtherKey{3, 4};

RemoteConfig config_for(const RedisServer& server, std::string password = "") {
  RemoteConfig config;
  config.endpoint = endpoint_of(password.empty() ? server.url() : server.url_with_password(password));
  config.command_timeout = std::chrono::milliseconds(2000);  // generous: the CI machine is busy
  config.connect_timeout = std::chrono::milliseconds(2000);
  return config;
}

TEST(RedisRemote, SavedRecordLoadsBackUnderItsKeyOnly) {
  RedisServer server;
  auto store = client_of<RedisRemote>(config_for(server));
  EXPECT_EQ(store.load(kKey).status, RemoteStatus::miss);
  ASSERT_EQ(store.save(kKey, "binary", {{"kernel_names", {"k"}}}).status, RemoteStatus::ok);
  RemoteResult hit = store.load(kKey);
  ASSERT_EQ(hit.status, RemoteStatus::ok) << hit.reason;
  EXPECT_EQ(hit.binary, "binary");
  EXPECT_EQ(hit.sidecar["kernel_names"][0], "k");
  // The same bytes copied under another key are not served there.
  server.set(store.record_name(kOtherKey), *server.get(store.record_name(kKey)));
  EXPECT_EQ(store.load(kOtherKey).status, RemoteStatus::corrupt);
}

TEST(RedisRemote, LeaseHasOneHolderAndOnlyItsTokenReleasesIt) {
  RedisServer server;
  auto node_a = client_of<RedisRemote>(config_for(server)), node_b = client_of<RedisRemote>(config_for(server));
  std::string token_a = new_lease_token(), token_b = new_lease_token();
  ASSERT_NE(token_a, token_b);
  EXPECT_EQ(node_b.lease_exists(kKey).status, RemoteStatus::miss);
  EXPECT_EQ(node_a.acquire_lease(kKey, token_a).status, RemoteStatus::ok);
  EXPECT_EQ(node_b.acquire_lease(kKey, token_b).status, RemoteStatus::miss);
  EXPECT_EQ(node_b.lease_exists(kKey).status, RemoteStatus::ok);
  EXPECT_EQ(node_b.release_lease(kKey, token_b).status, RemoteStatus::miss);  // not B's to free
  EXPECT_EQ(node_b.acquire_lease(kKey, token_b).status, RemoteStatus::miss);
  EXPECT_EQ(node_a.release_lease(kKey, token_a).status, RemoteStatus::ok);
  EXPECT_EQ(node_b.acquire_lease(kKey, token_b).status, RemoteStatus::ok);
  EXPECT_EQ(node_a.acquire_lease(kOtherKey, token_a).status, RemoteStatus::ok);  // leases are per key
}

TEST(RedisRemote, PrefixesSeparateCaches) {
  RedisServer server;
  RemoteConfig first = config_for(server), second = config_for(server);
  first.prefix = "one";
  second.prefix = "two";
  auto one = client_of<RedisRemote>(first), two = client_of<RedisRemote>(second);
  ASSERT_EQ(one.save(kKey, "x", nlohmann::json::object()).status, RemoteStatus::ok);
  EXPECT_EQ(two.load(kKey).status, RemoteStatus::miss);
  EXPECT_EQ(one.load(kKey).status, RemoteStatus::ok);
}

TEST(RedisRemote, AfterAFailureNothingIsSentDuringTheBackOff) {
  RedisServer server;
  auto store = client_of<RedisRemote>(config_for(server));
  ASSERT_EQ(store.save(kKey, "x", nlohmann::json::object()).status, RemoteStatus::ok);
  server.kill();
  RemoteResult failed = store.load(kKey);
  EXPECT_EQ(failed.status, RemoteStatus::error) << failed.reason;
  RemoteResult skipped = store.load(kKey);
  EXPECT_EQ(skipped.status, RemoteStatus::skipped);
  EXPECT_NE(skipped.reason.find("backing off"), std::string::npos) << skipped.reason;
  EXPECT_EQ(store.acquire_lease(kKey, "t").status, RemoteStatus::skipped);
}

TEST(RedisRemote, AHungServerTimesOutOnce) {
  RedisServer server;
  RemoteConfig config = config_for(server);
  config.command_timeout = std::chrono::milliseconds(100);
  auto store = client_of<RedisRemote>(config);
  server.pause();
  EXPECT_EQ(store.load(kKey).status, RemoteStatus::timeout);
  EXPECT_EQ(store.load(kKey).status, RemoteStatus::skipped);
  server.resume();
}

TEST(RedisRemote, RefusedCredentialsTurnTheRemoteOff) {
  RedisServer server("right");
  auto wrong = client_of<RedisRemote>(config_for(server, "wrong"));
  RemoteResult refused = wrong.load(kKey);
  EXPECT_EQ(refused.status, RemoteStatus::rejected) << refused.reason;
  EXPECT_EQ(refused.reason.find("wrong"), std::string::npos) << "the password must not be echoed";
  EXPECT_EQ(wrong.load(kKey).status, RemoteStatus::skipped);

  RemoteConfig no_password = config_for(server);
  no_password.endpoint = endpoint_of(server.url_with_password(""));
  EXPECT_EQ(client_of<RedisRemote>(no_password).load(kKey).status, RemoteStatus::rejected);  // NOAUTH
  EXPECT_EQ(client_of<RedisRemote>(config_for(server)).load(kKey).status, RemoteStatus::miss);
}

TEST(RedisRemote, SignedStoreRefusesUnsignedRecords) {
  RedisServer server;
  RemoteConfig signing = config_for(server);
  signing.hmac_key = "k";
  auto signed_store = client_of<RedisRemote>(signing);
  // Someone without the key writes an unsigned record straight into the signed namespace.
  server.set(signed_store.record_name(kKey), encode_record(kKey, "evil", nlohmann::json::object(), ""));
  EXPECT_EQ(signed_store.load(kKey).status, RemoteStatus::bad_hmac);
  ASSERT_EQ(signed_store.save(kKey, "good", nlohmann::json::object()).status, RemoteStatus::ok);
  EXPECT_EQ(signed_store.load(kKey).binary, "good");
}

// Issue 15.11: nodes with and without the HMAC key (or with two keys) share a server and a
// prefix. None may replace another's record: each keeps hitting its own, whatever the order.
TEST(RedisRemote, SignedAndUnsignedNodesNeverOverwriteEachOther) {
  RedisServer server;
  RemoteConfig signed_config = config_for(server), other_key_config = config_for(server);
  signed_config.hmac_key = "cluster-key";
  other_key_config.hmac_key = "another-key";
  auto unsigned_node = client_of<RedisRemote>(config_for(server)), signed_node = client_of<RedisRemote>(signed_config),
       other_node = client_of<RedisRemote>(other_key_config);
  ASSERT_EQ(signed_node.save(kKey, "signed", nlohmann::json::object()).status, RemoteStatus::ok);
  ASSERT_EQ(unsigned_node.save(kKey, "unsigned", nlohmann::json::object()).status, RemoteStatus::ok);
  ASSERT_EQ(other_node.save(kKey, "other", nlohmann::json::object()).status, RemoteStatus::ok);
  ASSERT_EQ(signed_node.save(kKey, "signed", nlohmann::json::object()).status, RemoteStatus::ok);
  RemoteResult from_signed = signed_node.load(kKey), from_unsigned = unsigned_node.load(kKey),
               from_other = other_node.load(kKey);
  ASSERT_EQ(from_signed.status, RemoteStatus::ok) << from_signed.reason;
  ASSERT_EQ(from_unsigned.status, RemoteStatus::ok) << from_unsigned.reason;
  ASSERT_EQ(from_other.status, RemoteStatus::ok) << from_other.reason;
  EXPECT_EQ(from_signed.binary, "signed");
  EXPECT_EQ(from_unsigned.binary, "unsigned");
  EXPECT_EQ(from_other.binary, "other");
  // Three records, three names; the signed names reveal nothing of the keys.
  EXPECT_EQ(server.keys("jitcache:*").size(), 3u);
  for (const std::string& name : server.keys("jitcache:*")) {
    EXPECT_EQ(name.find("cluster-key"), std::string::npos) << name;
  }
  // Leases follow the records: a signed node's build does not hold up unsigned nodes.
  EXPECT_EQ(signed_node.acquire_lease(kKey, "a").status, RemoteStatus::ok);
  EXPECT_EQ(unsigned_node.lease_exists(kKey).status, RemoteStatus::miss);
}

}  // namespace
}  // namespace jitcache::testing
