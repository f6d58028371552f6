// Every remote backend (Redis, HTTP, HTTPS, S3, a shared directory) through the engine's interface
// (store/remote_api/remote_client.hpp) against a real server (redis-server; nginx with WebDAV PUT and
// s3rver, started by the test; a directory): the same cases for each. Tampering is done on the
// server's own storage (a Redis SET, a file nginx serves, an object PUT to s3rver, a file in the
// directory).
#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "nginx_server.hpp"
#include "redis_server.hpp"
#include "s3_server.hpp"
#include "remote_clients.hpp"
#include "store/remote/file_remote.hpp"
#include "store/remote/http_remote.hpp"
#include "store/remote/remote_record.hpp"
#include "store/remote/s3_remote.hpp"
#include "store/remote/signed_entry.hpp"
#include "store/tiers/tiers.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

const Digest128 kKey{1, 2};
const Digest128 kOtherKey{3, 4};

// A server of one kind, and what the tests do to it behind the client's back.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string url() const = 0;
  virtual std::optional<std::string> stored(const RemoteConfig& config, const Digest128& key) = 0;
  virtual void replace(const RemoteConfig& config, const Digest128& key, const std::string& bytes) = 0;
  // A record as this backend frames it, valid but for the signature (another key, or none).
  virtual std::string forge(const Digest128& key, const std::string& binary, const std::string& hmac_key) const {
    return encode_record(key, binary, nlohmann::json::object(), hmac_key);
  }
  virtual void kill() = 0;
  // Why this backend cannot be made to hang, or "" when pause() does.
  virtual std::string cannot_hang() const { return {}; }
  virtual void pause() = 0;
  virtual void resume() = 0;
  virtual void configure(RemoteConfig&) const {}
};

class RedisBackend final : public Backend {
 public:
  std::string url() const override { return server_.url(); }
  std::optional<std::string> stored(const RemoteConfig& config, const Digest128& key) override {
    return server_.get(client_of<RedisRemote>(config).record_name(key));
  }
  void replace(const RemoteConfig& config, const Digest128& key, const std::string& bytes) override {
    server_.set(client_of<RedisRemote>(config).record_name(key), bytes);
  }
  void kill() override { server_.kill(); }
  void pause() override { server_.pause(); }
  void resume() override { server_.resume(); }

 private:
  RedisServer server_;
};

class NginxBackend final : public Backend {
 public:
  explicit NginxBackend(bool tls) : server_(tls ? NginxServer::Options::https() : NginxServer::Options()) {}
  std::string url() const override { return server_.url(); }
  std::optional<std::string> stored(const RemoteConfig& config, const Digest128& key) override {
    fs::path file = server_.root() / client_of<HttpRemote>(config).record_path(key);
    if (!fs::exists(file)) return std::nullopt;
    return read_text(file);
  }
  void replace(const RemoteConfig& config, const Digest128& key, const std::string& bytes) override {
    fs::path file = server_.root() / client_of<HttpRemote>(config).record_path(key);
    fs::create_directories(file.parent_path());
    write_text(file, bytes);
  }
  void kill() override { server_.kill(); }
  void pause() override { server_.pause(); }
  void resume() override { server_.resume(); }
  void configure(RemoteConfig& config) const override { config.ca_file = server_.ca_file().string(); }

 private:
  NginxServer server_;
};

// s3rver; its objects are read and replaced with the S3 client's own object calls.
class S3Backend final : public Backend {
 public:
  std::string url() const override { return server_.url(); }
  std::optional<std::string> stored(const RemoteConfig& config, const Digest128& key) override {
    S3Remote remote = client_of<S3Remote>(patient(config));
    RemoteResult got = remote.get(remote.record_key(key), 64u << 20);
    if (got.status != RemoteStatus::ok) return std::nullopt;
    return got.binary;
  }
  void replace(const RemoteConfig& config, const Digest128& key, const std::string& bytes) override {
    S3Remote remote = client_of<S3Remote>(patient(config));
    RemoteResult put = remote.put(remote.record_key(key), bytes, false);
    if (put.status != RemoteStatus::ok) throw std::runtime_error("PUT to s3rver: " + put.reason);
  }
  void kill() override { server_.kill(); }
  void pause() override { server_.pause(); }
  void resume() override { server_.resume(); }
  void configure(RemoteConfig& config) const override { server_.configure(config); }

 private:
  static RemoteConfig patient(RemoteConfig config) {
    config.command_timeout = std::chrono::seconds(60);  // the test's own tampering: only a hang guard
    return config;
  }
  S3Server server_;
};

// A directory standing for the shared file system; "killed": removed under the client.
class DirectoryBackend final : public Backend {
 public:
  DirectoryBackend() { fs::create_directories(root_); }
  std::string url() const override { return "file://" + root_.string(); }
  std::optional<std::string> stored(const RemoteConfig& config, const Digest128& key) override {
    fs::path file = root_ / client_of<FileRemote>(config).record_path(key);
    if (!fs::exists(file)) return std::nullopt;
    return read_text(file);
  }
  void replace(const RemoteConfig& config, const Digest128& key, const std::string& bytes) override {
    fs::path file = root_ / client_of<FileRemote>(config).record_path(key);
    fs::create_directories(file.parent_path());
    write_text(file, bytes);
  }
  std::string forge(const Digest128& key, const std::string& binary, const std::string& hmac_key) const override {
    return encode_shared_entry(key, binary, nlohmann::json::object(), hmac_key);
  }
  void kill() override { fs::remove_all(root_); }
  // A hung mount blocks in the kernel: that needs an NFS or FUSE server. tests/unit's
  // store_off_thread_call_test bounds a call blocked in a real read instead.
  std::string cannot_hang() const override { return "no hung mount without an NFS or FUSE server"; }
  void pause() override {}
  void resume() override {}

 private:
  TempDir tmp_;
  fs::path root_ = tmp_ / "shared";
};

class RemoteBackends : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "redis") backend = std::make_unique<RedisBackend>();
    else if (GetParam() == "file") backend = std::make_unique<DirectoryBackend>();
    else if (GetParam() == "s3") {
      JITCACHE_SKIP_WITHOUT_S3RVER();
      backend = std::make_unique<S3Backend>();
    }
    else backend = std::make_unique<NginxBackend>(GetParam() == "https");
  }

  RemoteConfig config(const std::string& hmac_key = {}) const {
    RemoteConfig config;
    config.endpoint = endpoint_of(backend->url());
    config.hmac_key = hmac_key;
    config.command_timeout = std::chrono::milliseconds(2000);  // generous: the CI machine is busy
    config.connect_timeout = std::chrono::milliseconds(2000);
    config.backoff = std::chrono::hours(1);
    backend->configure(config);
    return config;
  }
  static std::unique_ptr<RemoteClient> client(RemoteConfig config) { return open_remote(std::move(config)); }

  std::unique_ptr<Backend> backend;
};

TEST_P(RemoteBackends, SavedRecordLoadsBackUnderItsKeyOnly) {
  std::unique_ptr<RemoteClient> remote = client(config());
  EXPECT_EQ(remote->load(kKey).status, RemoteStatus::miss);
  ASSERT_EQ(remote->save(kKey, "binary", {{"kernel_names", {"k"}}}).status, RemoteStatus::ok);
  RemoteResult hit = remote->load(kKey);
  ASSERT_EQ(hit.status, RemoteStatus::ok) << hit.reason;
  EXPECT_EQ(hit.binary, "binary");
  EXPECT_EQ(hit.sidecar["kernel_names"][0], "k");
  ASSERT_EQ(remote->save(kKey, "binary 2", nlohmann::json::object()).status, RemoteStatus::ok);  // overwrites
  EXPECT_EQ(remote->load(kKey).binary, "binary 2");
  // The same bytes copied under another key are not served there.
  backend->replace(config(), kOtherKey, *backend->stored(config(), kKey));
  EXPECT_EQ(remote->load(kOtherKey).status, RemoteStatus::corrupt);
}

TEST_P(RemoteBackends, AFlippedByteIsCorruptAndNeverServed) {
  std::unique_ptr<RemoteClient> remote = client(config());
  ASSERT_EQ(remote->save(kKey, std::string(4096, 'b'), nlohmann::json::object()).status, RemoteStatus::ok);
  std::string record = *backend->stored(config(), kKey);
  record[record.size() / 2] ^= 0x20;
  backend->replace(config(), kKey, record);
  RemoteResult loaded = remote->load(kKey);
  EXPECT_EQ(loaded.status, RemoteStatus::corrupt) << loaded.reason;
  EXPECT_TRUE(loaded.binary.empty());
  backend->replace(config(), kKey, record.substr(0, record.size() / 3));  // truncated
  EXPECT_EQ(remote->load(kKey).status, RemoteStatus::corrupt);
}

TEST_P(RemoteBackends, WithAnHmacKeyForgedAndUnsignedRecordsAreRefused) {
  std::unique_ptr<RemoteClient> remote = client(config("cluster-secret"));
  ASSERT_EQ(remote->save(kKey, "signed", nlohmann::json::object()).status, RemoteStatus::ok);
  EXPECT_EQ(remote->load(kKey).status, RemoteStatus::ok);
  // Someone without the key: a valid record with a correct checksum, signed with their own key.
  backend->replace(config("cluster-secret"), kKey, backend->forge(kKey, "forged", "attacker"));
  RemoteResult forged = remote->load(kKey);
  EXPECT_EQ(forged.status, RemoteStatus::bad_hmac) << forged.reason;
  EXPECT_TRUE(forged.binary.empty());
  backend->replace(config("cluster-secret"), kKey, backend->forge(kKey, "unsigned", ""));
  EXPECT_EQ(remote->load(kKey).status, RemoteStatus::bad_hmac);
  // Signed and unsigned nodes live apart: the unsigned node does not see the signed record.
  EXPECT_EQ(client(config())->load(kKey).status, RemoteStatus::miss);
}

TEST_P(RemoteBackends, ARecordOverTheReplyCapIsRefusedNotRead) {
  RemoteConfig capped = config();
  capped.max_reply_bytes = 1 << 20;
  backend->replace(capped, kKey, std::string(8 << 20, 'x'));
  RemoteResult loaded = client(capped)->load(kKey);
  // A server's reply is the server's; a file in a share is that key's record only (issue 36.4).
  const bool one_file = backend->url().starts_with("file:");
  EXPECT_EQ(loaded.status, one_file ? RemoteStatus::corrupt : RemoteStatus::error) << loaded.reason;
  EXPECT_NE(loaded.reason.find("larger than"), std::string::npos) << loaded.reason;
}

TEST_P(RemoteBackends, AHungServerTimesOutOnceThenIsSkipped) {
  if (std::string why = backend->cannot_hang(); !why.empty()) GTEST_SKIP() << why;
  RemoteConfig quick = config();
  quick.command_timeout = std::chrono::milliseconds(300);
  std::unique_ptr<RemoteClient> remote = client(quick);
  backend->pause();  // accepts connections (kernel backlog) but never answers
  const auto started = std::chrono::steady_clock::now();
  RemoteResult hung = remote->load(kKey);
  const auto took = std::chrono::steady_clock::now() - started;
  RemoteResult next = remote->save(kKey, "b", nlohmann::json::object());
  backend->resume();
  EXPECT_EQ(hung.status, RemoteStatus::timeout) << hung.reason;
  EXPECT_LT(took, std::chrono::seconds(30));  // a hang guard, not a timing assertion
  EXPECT_EQ(next.status, RemoteStatus::skipped) << next.reason;  // backing off: nothing sent
  EXPECT_EQ(remote->load(kKey).status, RemoteStatus::skipped);
}

TEST_P(RemoteBackends, AServerKilledMidRunIsOneErrorThenSkipped) {
  std::unique_ptr<RemoteClient> remote = client(config());
  ASSERT_EQ(remote->save(kKey, "b", nlohmann::json::object()).status, RemoteStatus::ok);  // connected
  backend->kill();
  RemoteResult gone = remote->load(kKey);
  EXPECT_EQ(gone.status, RemoteStatus::error) << gone.reason;
  EXPECT_EQ(remote->load(kKey).status, RemoteStatus::skipped);
}

INSTANTIATE_TEST_SUITE_P(Servers, RemoteBackends, ::testing::Values("redis", "http", "https", "s3", "file"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace jitcache::testing
