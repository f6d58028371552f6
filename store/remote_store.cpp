#include "store/remote_store.hpp"

#include "store/hmac_sha256.hpp"
#include "store/redis_connection.hpp"
#include "store/remote_gate.hpp"
#include "store/remote_record.hpp"

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

RemoteResult result(RemoteStatus status, std::string reason = {}) {
  RemoteResult r;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

// An error reply. Missing or wrong credentials will not fix themselves: the remote goes off.
RemoteResult error_reply(const RedisReply& reply) {
  std::string text(reply.text());
  bool credentials = text.starts_with("NOAUTH") || text.starts_with("WRONGPASS") || text.starts_with("NOPERM");
  return result(credentials ? RemoteStatus::rejected : RemoteStatus::error, "server replied: " + text);
}

// The reply of a command that went through, or the failure that stopped it.
RemoteResult failure(const RedisError& error) { return result(status_of(error.kind), error.message); }

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

struct RemoteStore::State {
  RemoteGate gate;
  std::unique_ptr<RedisConnection> connection;
};

// Signed and unsigned records live apart, and so do records signed with different keys: a node
// never overwrites (or is made to rebuild) a record that another kind of node wrote. The
// namespace names the HMAC key by a tag of a fixed text, which tells nothing about the key.
std::string remote_namespace(const RemoteConfig& config) {
  if (config.hmac_key.empty()) return config.prefix;
  std::string tag = hmac_sha256(config.hmac_key, "jitcache remote namespace v1");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = config.prefix + ":hmac-";
  for (std::size_t i = 0; i < 8 && i < tag.size(); ++i) {
    name += kHex[static_cast<unsigned char>(tag[i]) >> 4];
    name += kHex[static_cast<unsigned char>(tag[i]) & 15];
  }
  return name;
}

RemoteStore::RemoteStore(RemoteConfig config)
    : config_(std::move(config)), namespace_(remote_namespace(config_)), state_(std::make_unique<State>()) {}

RemoteStore::~RemoteStore() = default;

std::string RemoteStore::record_name(const Digest128& key) const { return namespace_ + ":" + key.hex(); }
std::string RemoteStore::lease_name(const Digest128& key) const { return record_name(key) + ":lease"; }

RemoteResult RemoteStore::run(const std::function<RemoteResult(RedisConnection&, Deadline)>& work) {
  State& state = *state_;
  return state.gate.run(config_, [&](const RemoteGate::Call& call) {
    if (call.forked) state.connection.reset();  // the socket belongs to the parent
    RemoteResult outcome;
    if (!state.connection) {
      RedisError error;
      state.connection = RedisConnection::open(config_.endpoint, call.connect_deadline, call.deadline,
                                               config_.max_reply_bytes, &error);
      if (!state.connection) return failure(error);
    }
    outcome = work(*state.connection, call.deadline);
    if (outcome.failed()) state.connection.reset();  // a late reply would desynchronise it
    return outcome;
  });
}

RemoteResult checked_record(const Digest128& key, std::string_view value, std::string_view hmac_key) {
  DecodedRecord decoded = decode_record(key, value, hmac_key);
  if (decoded.check == RecordCheck::corrupt) return result(RemoteStatus::corrupt, decoded.reason);
  if (decoded.check == RecordCheck::bad_hmac) return result(RemoteStatus::bad_hmac, decoded.reason);
  RemoteResult hit = result(RemoteStatus::ok);
  hit.binary = std::move(decoded.binary);
  hit.sidecar = std::move(decoded.sidecar);
  return hit;
}

RemoteResult RemoteStore::load(const Digest128& key) {
  RemoteResult fetched = run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command({"GET", record_name(key)}, deadline, &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    if (reply->is_nil()) return result(RemoteStatus::miss);
    return checked_record(key, reply->text(), config_.hmac_key);
  });
  return fetched;
}

RemoteResult RemoteStore::save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) {
  std::string record = encode_record(key, binary, sidecar, config_.hmac_key);
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command({"SET", record_name(key), record}, deadline, &error);
    if (!reply) return failure(error);
    return reply->is_error() ? error_reply(*reply) : result(RemoteStatus::ok);
  });
}

RemoteResult RemoteStore::acquire_lease(const Digest128& key, const std::string& token) {
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command(
        {"SET", lease_name(key), token, "NX", "PX", std::to_string(config_.lease_ttl.count())}, deadline,
        &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    return result(reply->is_nil() ? RemoteStatus::miss : RemoteStatus::ok);
  });
}

RemoteResult RemoteStore::lease_exists(const Digest128& key) {
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command({"EXISTS", lease_name(key)}, deadline, &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    return result(reply->integer() > 0 ? RemoteStatus::ok : RemoteStatus::miss);
  });
}

RemoteResult RemoteStore::release_lease(const Digest128& key, const std::string& token) {
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply =
        connection.command({"EVAL", kReleaseScript, "1", lease_name(key), token}, deadline, &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    return result(reply->integer() > 0 ? RemoteStatus::ok : RemoteStatus::miss);
  });
}

RemoteResult RemoteStore::scan_names(const std::string& cursor, std::vector<std::string>* names,
                                     std::string* next_cursor, const std::string& under) {
  const std::string pattern = glob_prefix(under.empty() ? config_.prefix + ":" : under);
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply =
        connection.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, deadline, &error);
    if (!reply) return failure(error);
    if (reply->is_error()) return error_reply(*reply);
    std::vector<std::string> head = reply->strings();  // [cursor, [names...]]
    if (head.empty()) return result(RemoteStatus::error, "SCAN answered without a cursor");
    *next_cursor = head.front();
    *names = reply->element_strings(1);
    return result(RemoteStatus::ok);
  });
}

RemoteResult RemoteStore::command(std::initializer_list<std::string_view> arguments,
                                  const std::function<RemoteResult(const RedisReply&)>& handle) {
  return run([&](RedisConnection& connection, Deadline deadline) {
    RedisError error;
    std::unique_ptr<RedisReply> reply = connection.command(arguments, deadline, &error);
    if (!reply) return failure(error);
    return reply->is_error() ? error_reply(*reply) : handle(*reply);
  });
}

}  // namespace jitcache
