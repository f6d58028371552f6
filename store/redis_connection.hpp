// One blocking hiredis connection with a connect timeout and a timeout on every command.
#pragma once

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/remote_url.hpp"

struct redisContext;
struct redisReply;

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

 private:
  struct Free {
    void operator()(redisReply* reply) const;
  };
  std::unique_ptr<redisReply, Free> reply_;
};

class RedisConnection {
 public:
  // Connects, then AUTH and SELECT as the endpoint asks. nullptr and `error` on failure.
  static std::unique_ptr<RedisConnection> open(const RemoteEndpoint& endpoint, std::chrono::milliseconds connect_timeout,
                                               std::chrono::milliseconds command_timeout, RedisError* error);
  ~RedisConnection();

  // Sends one command (binary-safe arguments) and waits for its reply. After a failure the
  // connection is unusable: its reply may still arrive.
  std::unique_ptr<RedisReply> command(std::initializer_list<std::string_view> arguments, RedisError* error);

 private:
  explicit RedisConnection(redisContext* context) : context_(context) {}
  redisContext* context_;
};

}  // namespace jitcache
