// The remote tier: framed records on a Redis server, shared by many machines.
//
//   <ns>:<key hex>        the record (store/remote_record.hpp)
//   <ns>:<key hex>:lease  "SET NX PX" lease of the node that builds the key now
// <ns> is <prefix> for unsigned records, <prefix>:hmac-<16 hex> for records signed with an HMAC
// key (the hex names the key, not its value): signed and unsigned nodes never share records.
//
// Every call is bounded in total by connect_timeout + command_timeout (name resolution, connect,
// AUTH/SELECT and the command's whole reply included), replies by max_reply_bytes, and after a
// timeout or an error the server is not asked again for `backoff` (calls return `skipped` at once). A
// refused AUTH/SELECT disables the remote for the life of the object. Thread-safe; a forked
// child opens its own connection.
#pragma once

#include <chrono>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/remote_url.hpp"

namespace jitcache {

class RedisConnection;
class RedisReply;
using Deadline = std::chrono::steady_clock::time_point;

struct RemoteConfig {
  RemoteEndpoint endpoint;
  std::string prefix = "jitcache";
  std::string hmac_key;  // empty: records are neither signed nor verified
  std::string bearer_token;  // HTTP: "Authorization: Bearer <token>" (else basic auth from the URL, if any)
  std::string ca_file;       // HTTPS: trust this PEM bundle instead of the system's
  std::chrono::milliseconds connect_timeout{50};
  std::chrono::milliseconds command_timeout{200};
  std::chrono::milliseconds backoff{30000};
  std::chrono::milliseconds lease_ttl{60000};
  std::size_t max_reply_bytes = 64u << 20;  // a larger record is refused unread (error)
};

enum class RemoteStatus {
  ok,        // load: hit; save: stored; lease: acquired / exists; release: released
  miss,      // load: no record; lease: another node holds it / none exists
  corrupt,   // load: a record that fails its checksum or framing
  bad_hmac,  // load: a record that fails HMAC verification
  timeout,   // the server did not answer in time (back-off starts)
  error,     // connection or command failed (back-off starts)
  rejected,  // credentials or database refused (the remote is off from now on)
  skipped,   // backing off, disabled, or the connection is busy: nothing was sent
};
const char* to_string(RemoteStatus status);

struct RemoteResult {
  RemoteStatus status = RemoteStatus::skipped;
  std::string reason;  // for everything but ok / miss
  std::string notice;  // whatever the status: something the user should hear of (one warning)
  std::string binary;  // load hit
  nlohmann::json sidecar;

  bool failed() const {
    return status == RemoteStatus::timeout || status == RemoteStatus::error || status == RemoteStatus::rejected;
  }
};

class RemoteStore {
 public:
  explicit RemoteStore(RemoteConfig config);
  ~RemoteStore();
  RemoteStore(const RemoteStore&) = delete;
  RemoteStore& operator=(const RemoteStore&) = delete;

  const RemoteConfig& config() const { return config_; }

  RemoteResult load(const Digest128& key);
  RemoteResult save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar);

  // Cluster-wide single-flight. ok: this caller holds the lease (identified by `token`) for
  // lease_ttl; miss: another holder has it.
  RemoteResult acquire_lease(const Digest128& key, const std::string& token);
  // ok: somebody holds the lease; miss: nobody does.
  RemoteResult lease_exists(const Digest128& key);
  // Deletes the lease only if it still carries `token` (it may have expired and been re-taken).
  RemoteResult release_lease(const Digest128& key, const std::string& token);

  std::string record_name(const Digest128& key) const;
  std::string lease_name(const Digest128& key) const;
  // "<prefix>" without an HMAC key, "<prefix>:hmac-<16 hex>" with one.
  const std::string& record_namespace() const { return namespace_; }

  // One SCAN step over the key names under `under` (default "<prefix>:": records, leases, every
  // namespace): `names` gets this step's, `next_cursor` where to go on ("0": the walk is done).
  RemoteResult scan_names(const std::string& cursor, std::vector<std::string>* names, std::string* next_cursor,
                          const std::string& under = {});

  // One command of the caller's making (store/remote_programs.hpp), bounded, backed off and
  // failed like every call here; `handle` turns a reply that is not an error into the result.
  RemoteResult command(std::initializer_list<std::string_view> arguments,
                       const std::function<RemoteResult(const RedisReply&)>& handle);

 private:
  struct State;
  // Runs `work` on a live connection (connecting first), unless backing off or disabled.
  RemoteResult run(const std::function<RemoteResult(RedisConnection&, Deadline)>& work);

  RemoteConfig config_;
  std::string namespace_;
  std::unique_ptr<State> state_;
};

// "<prefix>" without an HMAC key, "<prefix>:hmac-<16 hex>" with one (any remote's record namespace).
std::string remote_namespace(const RemoteConfig& config);

// A record read under `key` as a lookup takes it (store/remote_record.hpp): ok with the binary
// and sidecar, or corrupt / bad_hmac with the reason. Every remote's load() ends here.
RemoteResult checked_record(const Digest128& key, std::string_view value, std::string_view hmac_key);

// A result with its status and reason (the clients' shorthand).
RemoteResult remote_result(RemoteStatus status, std::string reason = {});

// A random token naming one lease holder.
std::string new_lease_token();

}  // namespace jitcache
