// store/remote_programs against a real redis-server, without an app: input records are sent once
// per server and come back only when every check passes; program summaries are listed by SCAN and
// refused when they fail a check. The end-to-end `jitcache warm` is remote_warm_test.cpp.
#include <gtest/gtest.h>

#include "hashing/recorded_inputs.hpp"
#include "redis_server.hpp"
#include "remote_clients.hpp"
#include "store/remote/remote_framing.hpp"
#include "store/remote/remote_programs.hpp"

namespace jitcache::testing {
namespace {

const Digest128 kKey{1, 2};

RemoteConfig config_for(const RedisServer& server, std::string hmac_key = "") {
  RemoteConfig config;
  config.endpoint = endpoint_of(server.url());
  config.command_timeout = std::chrono::milliseconds(5000);  // generous: the CI machine is busy
  config.connect_timeout = std::chrono::milliseconds(5000);
  config.hmac_key = std::move(hmac_key);
  return config;
}

std::string a_record(const std::string& source) {
  RecordedInputs inputs;
  inputs.input = source;
  inputs.options = "-DX=1";
  return encode_recorded_inputs(inputs);
}

nlohmann::json a_sidecar(const Digest128& key, const Digest128& inputs) {
  return {{"key", key.hex()},
          {"api", "opencl"},
          {"inputs", inputs.hex()},
          {"device", "cpu-x"},
          {"created_by", "/usr/bin/app"},
          {"components", {{"device", {{"digest", Digest128{7, 7}.hex()}}}, {"input", {{"digest", Digest128{8, 8}.hex()}}}}}};
}

TEST(RemotePrograms, AnInputRecordIsSentOnceAndComesBackWhole) {
  RedisServer server;
  auto store = client_of<RedisRemote>(config_for(server));
  const std::string record = a_record("__kernel void k() {}");
  const Digest128 digest = xxh3_128(record);
  EXPECT_EQ(fetch_inputs(store, digest).status, RemoteStatus::miss);
  bool sent = false;
  ASSERT_EQ(publish_inputs(store, digest, record, &sent).status, RemoteStatus::ok);
  EXPECT_TRUE(sent);
  ASSERT_EQ(publish_inputs(store, digest, record, &sent).status, RemoteStatus::ok);
  EXPECT_FALSE(sent) << "the server has it: not sent again";
  RemoteResult fetched = fetch_inputs(store, digest);
  ASSERT_EQ(fetched.status, RemoteStatus::ok) << fetched.reason;
  EXPECT_EQ(fetched.binary, record);

  // A value that is not the record (here: truncated) is replaced by the next publication.
  std::string value = *server.get(inputs_name(store, digest));
  server.set(inputs_name(store, digest), value.substr(0, value.size() - 1));
  EXPECT_EQ(fetch_inputs(store, digest).status, RemoteStatus::corrupt);
  ASSERT_EQ(publish_inputs(store, digest, record, &sent).status, RemoteStatus::ok);
  EXPECT_TRUE(sent);
  EXPECT_EQ(fetch_inputs(store, digest).status, RemoteStatus::ok);
}

TEST(RemotePrograms, AnInputRecordFailingAnyCheckIsRefusedWithTheReason) {
  RedisServer server;
  auto store = client_of<RedisRemote>(config_for(server));
  const std::string record = a_record("__kernel void k() {}");
  const Digest128 digest = xxh3_128(record);
  const std::string name = inputs_name(store, digest);
  auto refused = [&](const std::string& value) {
    server.set(name, value);
    return fetch_inputs(store, digest);
  };
  // Well framed, right checksum, under the right name: but other bytes than the name says.
  RemoteResult other = refused(remote_framing::encode_blob("JCI1", digest, a_record("__kernel void evil() {}"), ""));
  EXPECT_EQ(other.status, RemoteStatus::corrupt);
  EXPECT_NE(other.reason.find("do not hash to its name"), std::string::npos) << other.reason;
  // Its own bytes, but not an input record (the digest matches: only decoding can tell).
  const std::string junk = "not a record";
  server.set(inputs_name(store, xxh3_128(junk)), remote_framing::encode_blob("JCI1", xxh3_128(junk), junk, ""));
  RemoteResult not_record = fetch_inputs(store, xxh3_128(junk));
  EXPECT_EQ(not_record.status, RemoteStatus::corrupt);
  EXPECT_NE(not_record.reason.find("not an input record"), std::string::npos) << not_record.reason;
  // Over the cap: refused after reading at most the cap and its framing.
  RemoteResult big = refused(std::string(kMaxRemoteInputsBytes + 4096, 'x'));
  EXPECT_EQ(big.status, RemoteStatus::corrupt);
  EXPECT_NE(big.reason.find("cap"), std::string::npos) << big.reason;
  // A summary (another kind of value) copied over the record.
  RemoteResult kind = refused(remote_framing::encode_blob("JCP1", digest, record, ""));
  EXPECT_EQ(kind.status, RemoteStatus::corrupt) << kind.reason;
  bool sent = false;
  EXPECT_EQ(publish_inputs(store, digest, std::string(kMaxRemoteInputsBytes + 1, 'x'), &sent).status,
            RemoteStatus::skipped);
  EXPECT_FALSE(sent);
}

TEST(RemotePrograms, WithAnHmacKeyOnlyRecordsSignedWithItAreAccepted) {
  RedisServer server;
  auto cluster = client_of<RedisRemote>(config_for(server, "cluster-secret"));
  const std::string record = a_record("__kernel void k() {}");
  const Digest128 digest = xxh3_128(record);
  bool sent = false;
  ASSERT_EQ(publish_inputs(cluster, digest, record, &sent).status, RemoteStatus::ok);
  ASSERT_EQ(fetch_inputs(cluster, digest).status, RemoteStatus::ok);
  const std::string name = inputs_name(cluster, digest);
  std::string flipped = *server.get(name);
  flipped[flipped.size() / 2] ^= 0x20;
  server.set(name, flipped);
  RemoteResult tampered = fetch_inputs(cluster, digest);
  EXPECT_EQ(tampered.status, RemoteStatus::bad_hmac) << tampered.reason;
  server.set(name, remote_framing::encode_blob("JCI1", digest, record, "attacker-key"));
  EXPECT_EQ(fetch_inputs(cluster, digest).status, RemoteStatus::bad_hmac);
  server.set(name, remote_framing::encode_blob("JCI1", digest, record, ""));  // unsigned
  EXPECT_EQ(fetch_inputs(cluster, digest).status, RemoteStatus::bad_hmac);
}

TEST(RemotePrograms, SummariesAreListedAndABadOneIsRefusedWithItsName) {
  RedisServer server;
  auto store = client_of<RedisRemote>(config_for(server, "cluster-secret"));
  const Digest128 inputs{5, 6}, second{3, 4}, third{9, 9};
  ASSERT_EQ(publish_program(store, kKey, *program_summary(a_sidecar(kKey, inputs), 100)).status, RemoteStatus::ok);
  ASSERT_EQ(publish_program(store, second, *program_summary(a_sidecar(second, inputs), 100)).status, RemoteStatus::ok);
  ASSERT_EQ(publish_program(store, third, *program_summary(a_sidecar(third, inputs), 100)).status, RemoteStatus::ok);
  EXPECT_FALSE(program_summary({{"key", kKey.hex()}}, 1)) << "no input record: nothing to publish";

  RemoteListing listing;
  ASSERT_EQ(list_programs(store, 100, &listing).status, RemoteStatus::ok);
  EXPECT_TRUE(listing.complete);
  ASSERT_EQ(listing.programs.size(), 3u);
  EXPECT_TRUE(listing.refused.empty());

  // One summary copied under another key's name (signed, but for kKey); one forged.
  server.set(program_name(store, second), *server.get(program_name(store, kKey)));
  server.set(program_name(store, third),
             remote_framing::encode_blob("JCP1", third, program_summary(a_sidecar(third, inputs), 1)->dump(), "attacker"));
  // Signed with the right key (a node that went wrong): a time that would overflow, and a
  // component name that would become an option of the replay child.
  const Digest128 late{10, 10}, option{11, 11};
  nlohmann::json far_future = *program_summary(a_sidecar(late, inputs), 1ll << 62);
  nlohmann::json dashes = *program_summary(a_sidecar(option, inputs), 100);
  dashes["components"]["--time-limit"] = Digest128{1, 1}.hex();
  server.set(program_name(store, late), remote_framing::encode_blob("JCP1", late, far_future.dump(), "cluster-secret"));
  server.set(program_name(store, option), remote_framing::encode_blob("JCP1", option, dashes.dump(), "cluster-secret"));

  RemoteListing after;
  ASSERT_EQ(list_programs(store, 100, &after).status, RemoteStatus::ok);
  ASSERT_EQ(after.programs.size(), 1u);
  EXPECT_EQ(after.programs[0].key, kKey);
  EXPECT_EQ(after.programs[0].summary["device"], "cpu-x");
  ASSERT_EQ(after.refused.size(), 4u);
  for (const RemoteRefusal& refusal : after.refused) {
    if (refusal.name == program_name(store, second)) {
      EXPECT_NE(refusal.reason.find("another name"), std::string::npos) << refusal.reason;
    } else if (refusal.name == program_name(store, third)) {
      EXPECT_NE(refusal.reason.find("bad_hmac"), std::string::npos) << refusal.reason;
    } else if (refusal.name == program_name(store, late)) {
      EXPECT_NE(refusal.reason.find("publication time"), std::string::npos) << refusal.reason;
    } else {
      EXPECT_EQ(refusal.name, program_name(store, option));
      EXPECT_NE(refusal.reason.find("components"), std::string::npos) << refusal.reason;
    }
  }
}

}  // namespace
}  // namespace jitcache::testing
