#include "store/remote/redis_remote.hpp"

#include "store/remote/hmac_sha256.hpp"
#include "store/remote/redis_connection.hpp"
#include "store/remote/remote_gate.hpp"
#include "store/remote/remote_record.hpp"

namespace jitcache {
namespace {

// Deletes the lease only when it is still ours: a plain DEL could free another holder's lease.
constexpr const char* kReleaseScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

RemoteStatus status_of(RedisFailure failure) {
  switch (failure) {
    case RedisFailure::timeout: return RemoteStatus::timeout;
    case RedisFailure::rejected: return RemoteStatus::rejected;
    default: return RemoteStatus::error;
  }
}

// An error reply. Missing or wrong credentials will not fix themselves: the remote goes off.
RemoteResult error_reply(const RedisReply& reply) {
  std::string text(reply.text());
  bool credentials = text.starts_with("NOAUTH") || text.starts_with("WRONGPASS") || text.starts_with("NOPERM");
  return remote_result(credentials ? RemoteStatus::rejected : RemoteStatus::error, "server replied: " + text);
}

// The reply of a command that went through, or the failure that stopped it.
RemoteResult failure(const RedisError& error) { return remote_result(status_of(error.kind), error.message); }

// A SCAN pattern matching `text` literally, then anything.
std::string glob_prefix(const std::string& text) {
  std::string pattern;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
    pattern += c;
  }
  return pattern + "*";
}

}  // namespace

struct RedisRemote::State {
  RemoteGate gate;
  std::unique_ptr<RedisConnection> connection;
};

// The scheme opens its client here, where the client is known (redis_scheme.cpp is not).
std::unique_ptr<RemoteClient> RedisEndpoint::open(RemoteConfig config) const {
  return std::make_unique<RedisRemote>(*this, std::move(config));
}

RedisRemote::RedisRemote(RedisEndpoint endpoint, RemoteConfig config)
    : endpoint_(std::move(endpoint)),
      config_(std::move(config)),
      namespace_(remote_namespace(config_)),
      state_(std::make_unique<State>()) {}

RedisRemote::~RedisRemote() = default;

std::string RedisRemote::record_name(const Digest128& key) const { return namespace_ + ":" + key.hex(); }
std::string RedisRemote::lease_name(const Digest128& key) const { return record_name(key) + ":lease"; }

std::string RedisRemote::describe() const { return endpoint_.redacted(); }

RemoteResult RedisRemote::run(const std::function<RemoteResult(RedisConnection&, Deadline)>& work) {
  State& state = *state_;
  return state.gate.run(config_, [&](const RemoteGate::Call& call) {
    if (call.forked) state.connection.reset();  // the socket belongs to the parent
    RemoteResult outcome;
    if (!state.connection) {
      RedisError error;
      state.connection = RedisConnection::open(endpoint_, call.connect_deadline, call.deadline,
                                               config_.max_reply_bytes, &error);
      if (!state.connection) return failure(error);
    }
    outcome = work(*state.connection, call.deadline);
    if (outcome.failed()) state.connection.reset();  // a late reply would desynchronise it
    return outcome;
  });
}

RemoteResult RedisRemote::load(const Digest128& key) {
  RemoteResult fetched = run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command({"GET", record_name(key)}, deadline, &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    if (reply->is_nil()) return remote_result(RemoteStatus::miss);
    return checked_record(key, reply->text(), config_.hmac_key);
  });
  return fetched;
}

RemoteResult RedisRemote::save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) {
  std::string record = encode_record(key, binary, sidecar, config_.hmac_key);
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command({"SET", record_name(key), record}, deadline, &error);
    if (!reply) return failure(error);
    return reply->is_error() ? error_reply(*reply) : remote_result(RemoteStatus::ok);
  });
}

RemoteResult RedisRemote::acquire_lease(const Digest128& key, const std::string& token) {
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command(
        {"SET", lease_name(key), token, "NX", "PX", std::to_string(config_.lease_ttl.count())}, deadline,
        &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    return remote_result(reply->is_nil() ? RemoteStatus::miss : RemoteStatus::ok);
  });
}

RemoteResult RedisRemote::lease_exists(const Digest128& key) {
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command({"EXISTS", lease_name(key)}, deadline, &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    return remote_result(reply->integer() > 0 ? RemoteStatus::ok : RemoteStatus::miss);
  });
}

RemoteResult RedisRemote::release_lease(const Digest128& key, const std::string& token) {
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply =
        connection.command({"EVAL", kReleaseScript, "1", lease_name(key), token}, deadline, &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    return remote_result(reply->integer() > 0 ? RemoteStatus::ok : RemoteStatus::miss);
  });
}

RemoteResult RedisRemote::scan_names(const std::string& cursor, std::vector<std::string>* names,
                                     std::string* next_cursor, const std::string& under) {
  const std::string pattern = glob_prefix(under.empty() ? config_.prefix + ":" : under);
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply =
        connection.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, deadline, &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    std::vector<std::string> head = reply->strings();  // [cursor, [names...]]
    if (head.empty()) return remote_result(RemoteStatus::error, "SCAN answered without a cursor");
    *next_cursor = head.front();
    *names = reply->element_strings(1);
    return remote_result(RemoteStatus::ok);
  });
}

RemoteResult RedisRemote::command(std::initializer_list<std::string_view> arguments,
                                  const std::function<RemoteResult(const RedisReply&)>& handle) {
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command(arguments, deadline, &error);
    if (!reply) return failure(error);
    return reply->is_error() ? error_reply(*reply) : handle(*reply);
  });
}

}  // namespace jitcache
