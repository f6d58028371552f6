#include "store/redis_connection.hpp"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <vector>

namespace jitcache {
namespace {

timeval to_timeval(std::chrono::milliseconds duration) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return tv;
}

// hiredis reports a socket timeout as an I/O error and leaves the cause in errno.
RedisError failure_of(const redisContext* context, int saved_errno) {
  bool timed_out = context->err == REDIS_ERR_IO &&
                   (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT ||
                    saved_errno == EINPROGRESS);
  return {timed_out ? RedisFailure::timeout : RedisFailure::error, context->errstr[0] ? context->errstr : "I/O error"};
}

}  // namespace

RedisReply::RedisReply(redisReply* reply) : reply_(reply) {}
void RedisReply::Free::operator()(redisReply* reply) const { freeReplyObject(reply); }
bool RedisReply::is_nil() const { return reply_->type == REDIS_REPLY_NIL; }
bool RedisReply::is_error() const { return reply_->type == REDIS_REPLY_ERROR; }
bool RedisReply::is_string() const { return reply_->type == REDIS_REPLY_STRING || reply_->type == REDIS_REPLY_STATUS; }
long long RedisReply::integer() const { return reply_->type == REDIS_REPLY_INTEGER ? reply_->integer : 0; }
std::string_view RedisReply::text() const {
  return reply_->str ? std::string_view(reply_->str, reply_->len) : std::string_view();
}

std::vector<std::string> RedisReply::strings() const {
  std::vector<std::string> values;
  if (reply_->type != REDIS_REPLY_ARRAY) return values;
  for (std::size_t i = 0; i < reply_->elements; ++i) {
    const redisReply* element = reply_->element[i];
    if (element->str) values.emplace_back(element->str, element->len);
  }
  return values;
}

std::unique_ptr<RedisConnection> RedisConnection::open(const RemoteEndpoint& endpoint,
                                                       std::chrono::milliseconds connect_timeout,
                                                       std::chrono::milliseconds command_timeout, RedisError* error) {
  errno = 0;
  redisContext* context = endpoint.unix_socket
                              ? redisConnectUnixWithTimeout(endpoint.socket_path.c_str(), to_timeval(connect_timeout))
                              : redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, to_timeval(connect_timeout));
  if (!context) {
    *error = {RedisFailure::error, "out of memory"};
    return nullptr;
  }
  if (context->err) {
    *error = failure_of(context, errno);
    redisFree(context);
    return nullptr;
  }
  std::unique_ptr<RedisConnection> connection(new RedisConnection(context));
  if (redisSetTimeout(context, to_timeval(command_timeout)) != REDIS_OK) {
    *error = {RedisFailure::error, "cannot set the command timeout"};
    return nullptr;
  }
  auto setup = [&](std::initializer_list<std::string_view> arguments, const char* what) {
    std::unique_ptr<RedisReply> reply = connection->command(arguments, error);
    if (reply && reply->is_error()) *error = {RedisFailure::rejected, std::string(what) + ": " + std::string(reply->text())};
    return reply && !reply->is_error();
  };
  if (!endpoint.password.empty()) {
    bool ok = endpoint.user.empty() ? setup({"AUTH", endpoint.password}, "AUTH")
                                    : setup({"AUTH", endpoint.user, endpoint.password}, "AUTH");
    if (!ok) return nullptr;
  }
  if (endpoint.db != 0 && !setup({"SELECT", std::to_string(endpoint.db)}, "SELECT")) return nullptr;
  return connection;
}

RedisConnection::~RedisConnection() { redisFree(context_); }

std::unique_ptr<RedisReply> RedisConnection::command(std::initializer_list<std::string_view> arguments,
                                                     RedisError* error) {
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  for (std::string_view argument : arguments) {
    pointers.push_back(argument.data());
    lengths.push_back(argument.size());
  }
  errno = 0;
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(pointers.size()), pointers.data(), lengths.data()));
  if (!reply) {
    *error = failure_of(context_, errno);
    return nullptr;
  }
  return std::make_unique<RedisReply>(reply);
}

}  // namespace jitcache
