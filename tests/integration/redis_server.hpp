// A real redis-server for one test: loopback, a free port, its own temp dir, no persistence.
// Stopped (and reaped) at the end of scope; kill()/pause()/resume() simulate failures.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace jitcache {
class RedisConnection;
}

namespace jitcache::testing {

class RedisServer {
 public:
  explicit RedisServer(std::string password = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  // redis://[:password@]127.0.0.1:port, with the given password (default: the server's own).
  std::string url() const;
  std::string url_with_password(const std::string& password) const;

  void kill();    // SIGKILL, then reap: the port refuses connections from now on
  void pause();   // SIGSTOP: connections are accepted by the kernel but nothing answers
  void resume();  // SIGCONT

  // The test's own client (authenticated): binary-safe helpers around single commands.
  std::vector<std::string> keys(const std::string& pattern);
  std::optional<std::string> get(const std::string& name);
  void set(const std::string& name, const std::string& value);

 private:
  bool start_on(int port);
  RedisConnection& client();

  TempDir dir_;
  std::string password_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::unique_ptr<RedisConnection> client_;
};

// A port the kernel just handed out on 127.0.0.1 (the test servers' ports: Redis, nginx).
int free_loopback_port();

}  // namespace jitcache::testing
