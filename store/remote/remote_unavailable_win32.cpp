// Windows (MinGW) builds have neither hiredis nor libcrypto in Debian: the remote tier's
// connection never opens there, so JITCACHE_REMOTE means "uncached remote" with one warning, as
// for an unreachable server. Nothing here is reached once open() has failed.
#include "store/remote/hmac_sha256.hpp"
#include "store/remote/redis_connection.hpp"

namespace jitcache {

RedisReply::RedisReply(redisReply* reply) : reply_(reply) {}
void RedisReply::Free::operator()(redisReply*) const {}
bool RedisReply::is_nil() const { return true; }
bool RedisReply::is_error() const { return true; }
bool RedisReply::is_string() const { return false; }
long long RedisReply::integer() const { return 0; }
std::string_view RedisReply::text() const { return {}; }
std::vector<std::string> RedisReply::strings() const { return {}; }
std::vector<std::string> RedisReply::element_strings(std::size_t) const { return {}; }

std::unique_ptr<RedisConnection> RedisConnection::open(const RedisEndpoint&, Deadline, Deadline, std::size_t,
                                                       RedisError* error) {
  *error = {RedisFailure::rejected, "this Windows build has no Redis client (the remote tier is Linux-only)"};
  return nullptr;
}
std::unique_ptr<RedisConnection> RedisConnection::open(const RedisEndpoint& endpoint, std::chrono::milliseconds,
                                                       std::chrono::milliseconds, RedisError* error, std::size_t) {
  return open(endpoint, Deadline{}, Deadline{}, 0, error);
}
RedisConnection::~RedisConnection() = default;
std::unique_ptr<RedisReply> RedisConnection::command(std::initializer_list<std::string_view>, Deadline,
                                                     RedisError* error) {
  *error = {RedisFailure::rejected, "no Redis client in this build"};
  return nullptr;
}
std::unique_ptr<RedisReply> RedisConnection::command(std::initializer_list<std::string_view> arguments,
                                                     RedisError* error) {
  return command(arguments, Deadline{}, error);
}
void RedisConnection::set_resolver_for_testing(Resolver) {}

// Never a valid tag: with an HMAC key set, every record is refused (fail closed).
std::string hmac_sha256(std::string_view, std::string_view) { return {}; }
bool tags_equal(std::string_view, std::string_view) { return false; }

}  // namespace jitcache
