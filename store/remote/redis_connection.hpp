// One connection to a Redis server whose every step has a total deadline: name resolution,
// TCP connect, and each command (request + whole reply), however slowly the server drips bytes.
// hiredis only formats commands and parses replies; the socket is driven here with poll(),
// because hiredis' own timeouts bound each read, not the command, and it buffers any reply whole.
#pragma once

#include <cstddef>
#include <functional>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/remote/redis_scheme.hpp"

struct redisReply;
struct addrinfo;

namespace jitcache {

enum class RedisFailure {
  none,
  timeout,    // connect or command took longer than allowed
  error,      // refused, reset, protocol error, error reply: may pass
  rejected,   // authentication or database selection refused: will not pass by retrying
};

struct RedisError {
  RedisFailure kind = RedisFailure::none;
  std::string message;
};

// A reply, owned. An error reply is not a failure of the connection: check is_error().
class RedisReply {
 public:
  explicit RedisReply(redisReply* reply);
  bool is_nil() const;
  bool is_error() const;
  bool is_string() const;  // bulk string or status ("OK")
  long long integer() const;
  std::string_view text() const;
  std::vector<std::string> strings() const;  // the string elements of an array reply
  // The string elements of the array that is element `index` of an array reply (SCAN's names).
  std::vector<std::string> element_strings(std::size_t index) const;

 private:
  struct Free {
    void operator()(redisReply* reply) const;
  };
  std::unique_ptr<redisReply, Free> reply_;
};

using Deadline = std::chrono::steady_clock::time_point;

// Replies larger than this are refused (error) before they are read whole: a record is at most
// max_entry_size plus its sidecar. Arrays (never a record) get at most kMaxArrayReplyBytes.
inline constexpr std::size_t kDefaultMaxReplyBytes = 64u << 20;
inline constexpr std::size_t kMaxArrayReplyBytes = 1u << 20;

class RedisConnection {
 public:
  // Resolves and connects within `connect_timeout` (both together), then sends AUTH and SELECT
  // as the endpoint asks, each within `command_timeout`. nullptr and `error` on failure.
  static std::unique_ptr<RedisConnection> open(const RedisEndpoint& endpoint, std::chrono::milliseconds connect_timeout,
                                               std::chrono::milliseconds command_timeout, RedisError* error,
                                               std::size_t max_reply_bytes = kDefaultMaxReplyBytes);
  // The same with absolute deadlines: one for resolution + connect, one for everything.
  static std::unique_ptr<RedisConnection> open(const RedisEndpoint& endpoint, Deadline connect_deadline,
                                               Deadline deadline, std::size_t max_reply_bytes, RedisError* error);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends one command (binary-safe arguments) and waits for its whole reply, at most the
  // command timeout given to open() in total. After a failure the connection is unusable.
  std::unique_ptr<RedisReply> command(std::initializer_list<std::string_view> arguments, RedisError* error);
  std::unique_ptr<RedisReply> command(std::initializer_list<std::string_view> arguments, Deadline deadline,
                                      RedisError* error);

  // Test seam: the name lookup (getaddrinfo's signature). Runs on a helper thread so that a
  // silent DNS server cannot hold the caller past its deadline. nullptr restores getaddrinfo.
  using Resolver = std::function<int(const char* host, const char* service, const ::addrinfo* hints,
                                     ::addrinfo** result)>;
  static void set_resolver_for_testing(Resolver resolver);

 private:
  RedisConnection(int fd, std::size_t max_reply_bytes);
  int fd_;
  std::size_t max_reply_bytes_;
  std::chrono::milliseconds command_timeout_{0};
};

}  // namespace jitcache
