// The remote tier: framed records on a Redis server, shared by many machines.
//
//   <ns>:<key hex>        the record (store/remote/remote_record.hpp)
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
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

class RedisConnection;
class RedisReply;

class RedisRemote {
 public:
  explicit RedisRemote(RemoteConfig config);
  ~RedisRemote();
  RedisRemote(const RedisRemote&) = delete;
  RedisRemote& operator=(const RedisRemote&) = delete;

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

  // One command of the caller's making (store/remote/remote_programs.hpp), bounded, backed off and
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
}  // namespace jitcache
