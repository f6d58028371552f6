// The remote tier's bounds against hostile servers (docs/remote.md, "Bounded cost"): a fake
// Redis on 127.0.0.1 that drips its reply one byte every 150 ms, announces a huge bulk string or
// a huge array, and a name lookup that never answers; a fake HTTP server that drips, lies in its
// Content-Length, floods chunks, redirects or fails, asked over HTTP and as an S3 endpoint. Each call must end on its own bound with
// the status that says which bound stopped it. The generous ctest TIMEOUT is only a hang guard.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "core/remote_tier.hpp"
#include "core/settings.hpp"
#include "remote_clients.hpp"
#include "store/remote/http_remote.hpp"
#include "store/remote/redis_connection.hpp"
#include "store/remote/redis_remote.hpp"
#include "store/remote/s3_scheme.hpp"

namespace jitcache::testing {
namespace {

const Digest128 kKey{1, 2};

// One-connection fake server: accepts, then hands the socket to `respond` on its own thread.
// `respond` gets a pacing function that waits `ms` (false once the test is over) and returns
// when it is done or the client has gone.
class FakeRedis {
 public:
  using Pace = std::function<bool(int ms)>;
  explicit FakeRedis(std::function<void(int fd, const Pace& pace)> respond) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 || ::listen(listener_, 4) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0 || ::pipe(stop_) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this, respond = std::move(respond)] {
      pollfd waits[2] = {{listener_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(waits, 2, -1) <= 0 || waits[1].revents) return;
      int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) return;
      accepted_ = true;
      Pace pace = [this](int ms) {
        pollfd stop{stop_[0], POLLIN, 0};
        return ::poll(&stop, 1, ms) == 0;  // the adversary's own pacing, not a test synchronisation
      };
      char request[4096];
      if (::recv(client, request, sizeof request, 0) > 0 && respond) respond(client, pace);  // the client's request
      // Keep the socket until the client closes it: closing with its bytes unread would reset it.
      ::shutdown(client, SHUT_WR);
      for (;;) {
        pollfd both[2] = {{client, POLLIN, 0}, {stop_[0], POLLIN, 0}};
        if (::poll(both, 2, -1) <= 0 || both[1].revents || ::recv(client, request, sizeof request, 0) <= 0) break;
      }
      ::close(client);
    });
  }
  ~FakeRedis() {
    (void)!::write(stop_[1], "x", 1);
    thread_.join();
    ::close(listener_);
    ::close(stop_[0]);
    ::close(stop_[1]);
  }
  RemoteConfig config() const {
    RemoteConfig config;
    config.endpoint = endpoint_of("redis://127.0.0.1:" + std::to_string(port_));
    config.backoff = std::chrono::hours(1);
    return config;
  }
  bool accepted() const { return accepted_; }
  std::string http_base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  RemoteConfig http_config() const {
    RemoteConfig config = this->config();
    config.endpoint = endpoint_of(http_base() + "/cache");
    config.connect_timeout = std::chrono::milliseconds(5000);
    config.command_timeout = std::chrono::milliseconds(20000);
    config.max_reply_bytes = 1 << 20;
    return config;
  }

 private:
  int listener_ = -1;
  int stop_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<bool> accepted_{false};
  std::thread thread_;
};

bool send_all(int fd, const std::string& bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    ssize_t written = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (written <= 0) return false;
    sent += static_cast<std::size_t>(written);
  }
  return true;
}

TEST(RemoteBounds, ASlowDripReplyEndsAtTheCommandTimeout) {
  // 48 bytes at one per 150 ms: 7 s in all, each byte well inside a 300 ms per-read timeout.
  FakeRedis server([](int fd, const FakeRedis::Pace& pace) {
    std::string reply = "$40\r\n" + std::string(40, 'x') + "\r\n";
    for (char byte : reply) {
      if (!pace(150) || !send_all(fd, std::string(1, byte))) return;
    }
  });
  RemoteConfig config = server.config();
  config.connect_timeout = std::chrono::milliseconds(500);  // one call's bound: connect + command
  config.command_timeout = std::chrono::milliseconds(300);
  auto store = client_of<RedisRemote>(config);
  RemoteResult result = store.load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::timeout) << result.reason;
  EXPECT_NE(result.reason.find("reply took longer"), std::string::npos) << result.reason;
}

TEST(RemoteBounds, AHugeBulkReplyIsRefusedBeforeItIsRead) {
  FakeRedis server([](int fd, const FakeRedis::Pace& pace) {
    // Announces 64 MiB and sends it: a client without a cap would hold all of it in memory.
    if (!send_all(fd, "$67108864\r\n")) return;
    const std::string chunk(1 << 16, 'x');
    for (int i = 0; i < 1024 && pace(0); ++i) {
      if (!send_all(fd, chunk)) return;
    }
    send_all(fd, "\r\n");
  });
  RemoteConfig config = server.config();
  config.connect_timeout = std::chrono::milliseconds(5000);
  config.command_timeout = std::chrono::milliseconds(20000);
  config.max_reply_bytes = 1 << 20;
  auto store = client_of<RedisRemote>(config);
  RemoteResult result = store.load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::error) << result.reason;
  EXPECT_NE(result.reason.find("reply larger than"), std::string::npos) << result.reason;
}

TEST(RemoteBounds, AHugeArrayReplyIsRefused) {
  FakeRedis server([](int fd, const FakeRedis::Pace&) {
    std::string reply = "*300000\r\n";
    for (int i = 0; i < 300000; ++i) reply += ":1\r\n";  // 1.2 MB, ~50 bytes of memory each
    send_all(fd, reply);
  });
  RemoteConfig config = server.config();
  config.connect_timeout = std::chrono::milliseconds(5000);
  config.command_timeout = std::chrono::milliseconds(20000);
  auto store = client_of<RedisRemote>(config);
  RemoteResult result = store.load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::error) << result.reason;
  EXPECT_NE(result.reason.find("reply larger than"), std::string::npos) << result.reason;
}

TEST(RemoteBounds, ASilentNameLookupEndsAtTheConnectTimeout) {
  // A DNS server that never answers (until the test is over). Shared: the abandoned lookup
  // thread outlives this test's stack.
  struct Gate {
    std::mutex mutex;
    std::condition_variable released_cv;
    bool released = false;
    std::atomic<int> lookups{0};
  };
  auto gate = std::make_shared<Gate>();
  RedisConnection::set_resolver_for_testing([gate](const char*, const char*, const ::addrinfo*, ::addrinfo**) {
    ++gate->lookups;
    std::unique_lock lock(gate->mutex);
    gate->released_cv.wait(lock, [&] { return gate->released; });
    return EAI_AGAIN;
  });
  RemoteConfig config;
  config.endpoint = endpoint_of("redis://cache.jitcache.invalid:6379");
  config.connect_timeout = std::chrono::milliseconds(200);
  config.command_timeout = std::chrono::milliseconds(200);
  auto store = client_of<RedisRemote>(config);
  RemoteResult result = store.load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::timeout) << result.reason;
  EXPECT_NE(result.reason.find("resolving cache.jitcache.invalid"), std::string::npos) << result.reason;
  EXPECT_EQ(gate->lookups.load(), 1);
  RedisConnection::set_resolver_for_testing(nullptr);
  {
    std::lock_guard lock(gate->mutex);
    gate->released = true;
  }
  gate->released_cv.notify_all();
}

TEST(RemoteBounds, ZeroOrHugeTimeoutsAreRefusedNotUnbounded) {
  const char* const names[] = {"JITCACHE_DIR", "JITCACHE_REMOTE", "JITCACHE_MAX_ENTRY_SIZE", "JITCACHE_REMOTE_TIMEOUT_MS",
                               "JITCACHE_REMOTE_CONNECT_TIMEOUT_MS"};
  for (const char* value : {"0", "99999999999"}) {
    ::setenv("JITCACHE_DIR", (std::filesystem::temp_directory_path() / "jitcache-no-such-root").c_str(), 1);
    ::setenv("JITCACHE_REMOTE", "redis://127.0.0.1:1", 1);
    ::setenv("JITCACHE_MAX_ENTRY_SIZE", "1M", 1);
    ::setenv("JITCACHE_REMOTE_TIMEOUT_MS", value, 1);
    ::setenv("JITCACHE_REMOTE_CONNECT_TIMEOUT_MS", value, 1);
    const Settings settings = load_settings();
    for (const char* name : names) ::unsetenv(name);
    std::string problems;
    for (const std::string& problem : settings.problems) problems += problem + "\n";
    EXPECT_NE(problems.find("remote_timeout: not milliseconds from 1 to 600000"), std::string::npos) << problems;
    EXPECT_NE(problems.find("remote_connect_timeout: not milliseconds from 1 to 600000"), std::string::npos) << problems;
    std::vector<RemoteConfig> configs;
    bool read_only = false;
    std::chrono::milliseconds lease_wait{0};
    std::string problem = remote_configs_from(settings, remote_schemes(), &configs, &read_only, &lease_wait);
    ASSERT_EQ(configs.size(), 1u) << problem;
    const RemoteConfig& config = configs.front();
    EXPECT_EQ(config.command_timeout, std::chrono::milliseconds(200)) << value;  // the table's defaults
    EXPECT_EQ(config.connect_timeout, std::chrono::milliseconds(50)) << value;
    EXPECT_EQ(config.max_reply_bytes, (1u << 20) + (16u << 20));  // a record: one entry + its sidecar
  }
}

// An HTTP answer, sent whole, then the connection held open (the fake keeps it until the client goes).
FakeRedis http_answer(std::string answer) {
  return FakeRedis([answer = std::move(answer)](int fd, const FakeRedis::Pace&) { send_all(fd, answer); });
}

// The same hostile server behind each HTTP-speaking scheme: plain HTTP, and S3 (its endpoint).
class RemoteBoundsHttp : public ::testing::TestWithParam<std::string> {
 protected:
  RemoteConfig config_of(const FakeRedis& server) const {
    RemoteConfig config = server.http_config();
    if (GetParam() == "s3") {
      config.endpoint = endpoint_of("s3://jit-cache/team");
      config.scheme_settings = {{std::string(kS3EndpointSetting), server.http_base()},
                                {std::string(kS3AccessKeyIdSetting), "key-id"},
                                {std::string(kS3SecretAccessKeySetting), "secret"}};
    }
    return config;
  }
};

TEST_P(RemoteBoundsHttp, ASlowDripReplyEndsAtTheDeadline) {
  FakeRedis server([](int fd, const FakeRedis::Pace& pace) {
    std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + std::string(40, 'x');
    for (char byte : reply) {
      if (!pace(150) || !send_all(fd, std::string(1, byte))) return;
    }
  });
  RemoteConfig config = config_of(server);
  config.connect_timeout = std::chrono::milliseconds(500);
  config.command_timeout = std::chrono::milliseconds(300);
  RemoteResult result = open_remote(config)->load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::timeout) << result.reason;
}

TEST_P(RemoteBoundsHttp, AnAnnouncedHugeBodyIsRefusedBeforeItIsRead) {
  FakeRedis server([](int fd, const FakeRedis::Pace& pace) {
    if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n")) return;
    const std::string chunk(1 << 16, 'x');
    for (int i = 0; i < 1024 && pace(0); ++i) {
      if (!send_all(fd, chunk)) return;
    }
  });
  RemoteResult result = open_remote(config_of(server))->load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::error) << result.reason;
  EXPECT_NE(result.reason.find("larger than"), std::string::npos) << result.reason;
}

TEST_P(RemoteBoundsHttp, AChunkedFloodIsCutOffAtTheCap) {
  FakeRedis server([](int fd, const FakeRedis::Pace& pace) {
    if (!send_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
    const std::string chunk = "10000\r\n" + std::string(1 << 16, 'x') + "\r\n";
    for (int i = 0; i < 1024 && pace(0); ++i) {  // 64 MiB announced nowhere
      if (!send_all(fd, chunk)) return;
    }
  });
  RemoteResult result = open_remote(config_of(server))->load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::error) << result.reason;
  EXPECT_NE(result.reason.find("larger than"), std::string::npos) << result.reason;
}

TEST_P(RemoteBoundsHttp, ARedirectIsAnErrorNeverFollowed) {
  FakeRedis target(nullptr);  // a second server the redirect points to: it must never be asked
  FakeRedis server = http_answer("HTTP/1.1 302 Found\r\nLocation: " + target.http_base() +
                                 "/cache/x\r\nContent-Length: 0\r\n\r\n");
  RemoteResult result = open_remote(config_of(server))->load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::error) << result.reason;
  EXPECT_NE(result.reason.find("redirects are not followed"), std::string::npos) << result.reason;
  EXPECT_FALSE(target.accepted());
}

TEST_P(RemoteBoundsHttp, AStatusOtherThan200Or404IsAnError) {
  FakeRedis server = http_answer("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
  RemoteResult result = open_remote(config_of(server))->load(kKey);
  EXPECT_EQ(result.status, RemoteStatus::error) << result.reason;
  EXPECT_NE(result.reason.find("HTTP 500"), std::string::npos) << result.reason;
}

INSTANTIATE_TEST_SUITE_P(Schemes, RemoteBoundsHttp, ::testing::Values("http", "s3"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace jitcache::testing
