#include "redis_server.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <thread>

#include "store/remote/redis_connection.hpp"

namespace jitcache::testing {

// A port the kernel just handed out on 127.0.0.1; free unless someone takes it in between
// (then the server fails to start and another port is tried).
int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("no free loopback port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

RedisServer::RedisServer(std::string password) : password_(std::move(password)) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (start_on(free_loopback_port())) return;
  }
  throw std::runtime_error("redis-server did not start; see " + (dir_ / "redis.log").string());
}

bool RedisServer::start_on(int port) {
  std::vector<std::string> args = {"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1",
                                   "--dir", dir_.path().string(), "--save", "", "--appendonly", "no",
                                   "--logfile", (dir_ / "redis.log").string()};
  if (!password_.empty()) args.insert(args.end(), {"--requirepass", password_});
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    _exit(127);
  }
  pid_ = pid;
  port_ = port;
  RedisEndpoint endpoint;
  endpoint.address = {"127.0.0.1", port};
  endpoint.credentials.password = password_;
  bool ready = wait_until([&] {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return true;  // exited: port taken?
    RedisError error;
    client_ = RedisConnection::open(endpoint, std::chrono::milliseconds(200), std::chrono::seconds(5), &error);
    return client_ != nullptr;
  }, std::chrono::seconds(10));
  if (ready && client_) return true;
  kill();
  return false;
}

RedisServer::~RedisServer() {
  client_.reset();
  if (pid_ > 0) {
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::string RedisServer::url() const { return url_with_password(password_); }

std::string RedisServer::url_with_password(const std::string& password) const {
  return "redis://" + (password.empty() ? "" : ":" + password + "@") + "127.0.0.1:" + std::to_string(port_);
}

void RedisServer::kill() {
  client_.reset();
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void RedisServer::pause() { ::kill(pid_, SIGSTOP); }
void RedisServer::resume() { ::kill(pid_, SIGCONT); }

RedisConnection& RedisServer::client() {
  if (!client_) throw std::runtime_error("redis-server is not running");
  return *client_;
}

std::vector<std::string> RedisServer::keys(const std::string& pattern) {
  RedisError error;
  auto reply = client().command({"KEYS", pattern}, &error);
  if (!reply || reply->is_error()) throw std::runtime_error("KEYS failed: " + error.message);
  return reply->strings();
}

std::optional<std::string> RedisServer::get(const std::string& name) {
  RedisError error;
  auto reply = client().command({"GET", name}, &error);
  if (!reply || reply->is_error()) throw std::runtime_error("GET failed: " + error.message);
  if (reply->is_nil()) return std::nullopt;
  return std::string(reply->text());
}

void RedisServer::set(const std::string& name, const std::string& value) {
  RedisError error;
  auto reply = client().command({"SET", name, value}, &error);
  if (!reply || reply->is_error()) throw std::runtime_error("SET failed: " + error.message);
}

}  // namespace jitcache::testing
