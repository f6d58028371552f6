// What only the HTTP(S) remote has, against a real nginx started by the test: basic and bearer
// auth (secrets never in a reason), TLS trust (a self-signed certificate is refused unless it is
// the configured CA), a server that refuses writes, and what `jitcache warm` reads there (input
// records, program summaries listed through nginx's JSON autoindex). The cases every backend
// shares are remote_backends_test.cpp; hostile fake servers are remote_bounds_test.cpp.
#include <gtest/gtest.h>

#include "hashing/recorded_inputs.hpp"
#include "nginx_server.hpp"
#include "store/remote/http_remote.hpp"
#include "remote_clients.hpp"

namespace jitcache::testing {
namespace {

const Digest128 kKey{1, 2};

RemoteConfig config_for(const std::string& url, const NginxServer& server) {
  RemoteConfig config;
  config.endpoint = endpoint_of(url);
  config.command_timeout = std::chrono::milliseconds(5000);  // generous: the CI machine is busy
  config.connect_timeout = std::chrono::milliseconds(5000);
  config.backoff = std::chrono::hours(1);
  config.ca_file = server.ca_file().string();
  return config;
}

TEST(RemoteHttp, BasicAuthWithTheRightPasswordWorksAWrongOneTurnsTheRemoteOff) {
  NginxServer server(NginxServer::Options::basic_auth("builder", "right-secret"));
  auto right = client_of<HttpRemote>(config_for(server.url(), server));
  ASSERT_EQ(right.save(kKey, "b", nlohmann::json::object()).status, RemoteStatus::ok);
  EXPECT_EQ(right.load(kKey).status, RemoteStatus::ok);

  auto wrong = client_of<HttpRemote>(config_for(server.url_with_credentials("builder", "wrong-secret"), server));
  RemoteResult refused = wrong.load(kKey);
  EXPECT_EQ(refused.status, RemoteStatus::rejected) << refused.reason;
  EXPECT_EQ(refused.reason.find("wrong-secret"), std::string::npos) << refused.reason;
  EXPECT_EQ(wrong.describe().find("wrong-secret"), std::string::npos) << wrong.describe();
  EXPECT_EQ(wrong.load(kKey).status, RemoteStatus::skipped);  // off for the life of the client
  EXPECT_EQ(client_of<HttpRemote>(config_for(server.url_with_credentials("", ""), server)).load(kKey).status,
            RemoteStatus::rejected);  // no credentials at all
}

TEST(RemoteHttp, ABearerTokenIsSentAndNeverShown) {
  NginxServer server(NginxServer::Options::bearer("token-123"));
  RemoteConfig config = config_for(server.url(), server);
  EXPECT_EQ(client_of<HttpRemote>(config).load(kKey).status, RemoteStatus::rejected);  // none sent: 401
  config.scheme_settings["remote_bearer_token"] = "token-123";
  auto remote = client_of<HttpRemote>(config);
  ASSERT_EQ(remote.save(kKey, "b", nlohmann::json::object()).status, RemoteStatus::ok);
  EXPECT_EQ(remote.load(kKey).status, RemoteStatus::ok);
  EXPECT_EQ(remote.describe().find("token-123"), std::string::npos) << remote.describe();
}

TEST(RemoteHttp, HttpsTrustsOnlyTheConfiguredCertificate) {
  NginxServer server(NginxServer::Options::https());
  auto trusting = client_of<HttpRemote>(config_for(server.url(), server));
  ASSERT_EQ(trusting.save(kKey, "b", nlohmann::json::object()).status, RemoteStatus::ok);
  EXPECT_EQ(trusting.load(kKey).status, RemoteStatus::ok);

  RemoteConfig system_cas = config_for(server.url(), server);
  system_cas.ca_file.clear();  // the system's CAs do not vouch for a self-signed certificate
  RemoteResult refused = client_of<HttpRemote>(system_cas).load(kKey);
  EXPECT_EQ(refused.status, RemoteStatus::rejected) << refused.reason;

  // The trusted certificate, but for another name (it names 127.0.0.1; asked as localhost): refused.
  std::string url = server.url();
  url.replace(url.find("127.0.0.1"), 9, "localhost");
  RemoteResult other_name = client_of<HttpRemote>(config_for(url, server)).load(kKey);
  EXPECT_EQ(other_name.status, RemoteStatus::rejected) << other_name.reason;
  EXPECT_NE(other_name.reason.find("name"), std::string::npos) << other_name.reason;  // not a refused connection
  EXPECT_TRUE(other_name.binary.empty());
}

TEST(RemoteHttp, AServerThatRefusesWritesStillServesReads) {
  NginxServer writable;
  auto producer = client_of<HttpRemote>(config_for(writable.url(), writable));
  ASSERT_EQ(producer.save(kKey, "b", nlohmann::json::object()).status, RemoteStatus::ok);

  NginxServer read_only(NginxServer::Options::refusing_writes());
  std::filesystem::create_directories((read_only.root() / producer.record_path(kKey)).parent_path());
  std::filesystem::copy_file(writable.root() / producer.record_path(kKey), read_only.root() / producer.record_path(kKey));
  auto consumer = client_of<HttpRemote>(config_for(read_only.url(), read_only));
  RemoteResult write = consumer.save(Digest128{5, 6}, "b", nlohmann::json::object());
  EXPECT_EQ(write.status, RemoteStatus::skipped) << write.reason;  // not a failure: no back-off
  EXPECT_EQ(consumer.load(kKey).status, RemoteStatus::ok);
  EXPECT_EQ(consumer.save(Digest128{5, 6}, "b", nlohmann::json::object()).status, RemoteStatus::skipped);
  EXPECT_EQ(read_only.files().size(), 1u);
}

TEST(RemoteHttp, WarmFindsPublishedProgramsAndTheirInputRecords) {
  NginxServer server;
  auto remote = client_of<HttpRemote>(config_for(server.url(), server));
  RecordedInputs inputs;
  inputs.input = "__kernel void k() {}";
  const std::string record = encode_recorded_inputs(inputs);
  const Digest128 digest = xxh3_128(record);
  bool sent = false;
  ASSERT_EQ(remote.publish_inputs(digest, record, &sent).status, RemoteStatus::ok);
  EXPECT_TRUE(sent);
  ASSERT_EQ(remote.publish_inputs(digest, record, &sent).status, RemoteStatus::ok);
  EXPECT_FALSE(sent) << "the server has it (HEAD): not sent again";
  const nlohmann::json sidecar = {{"key", kKey.hex()},
                                  {"api", "opencl"},
                                  {"inputs", digest.hex()},
                                  {"device", "cpu-x"},
                                  {"created_by", "/usr/bin/app"},
                                  {"components", {{"device", {{"digest", Digest128{7, 7}.hex()}}}}}};
  ASSERT_EQ(remote.publish_program(kKey, *program_summary(sidecar, 1000)).status, RemoteStatus::ok);

  RemoteListing listing;
  ASSERT_EQ(remote.list_programs(&listing).status, RemoteStatus::ok);
  EXPECT_TRUE(listing.complete);
  ASSERT_EQ(listing.programs.size(), 1u);
  EXPECT_EQ(listing.programs[0].key, kKey);
  EXPECT_EQ(listing.programs[0].summary["inputs"], digest.hex());
  RemoteResult fetched = remote.fetch_inputs(digest);
  ASSERT_EQ(fetched.status, RemoteStatus::ok) << fetched.reason;
  EXPECT_EQ(fetched.binary, record);

  // A summary that fails its check is refused with the reason, not listed.
  std::string summary_file = (server.root() / remote.program_path(kKey)).string();
  std::string value = read_text(summary_file);
  value[value.size() / 2] ^= 1;
  write_text(summary_file, value);
  RemoteListing tampered;
  ASSERT_EQ(remote.list_programs(&tampered).status, RemoteStatus::ok);
  EXPECT_TRUE(tampered.programs.empty());
  EXPECT_EQ(tampered.refused.size(), 1u);
}

}  // namespace
}  // namespace jitcache::testing
