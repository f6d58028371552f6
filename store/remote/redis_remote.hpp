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
#include "store/remote/redis_scheme.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

class RedisConnection;
class RedisReply;

class RedisRemote final : public RemoteClient {
 public:
  using Endpoint = RedisEndpoint;  // what its scheme reads from a URL

  RedisRemote(RedisEndpoint endpoint, RemoteConfig config);
  ~RedisRemote() override;
  RedisRemote(const RedisRemote&) = delete;
  RedisRemote& operator=(const RedisRemote&) = delete;

  const RemoteConfig& config() const { return config_; }

  RemoteResult load(const Digest128& key) override;
  RemoteResult save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) override;

  // Cluster-wide single-flight. ok: this caller holds the lease (identified by `token`) for
  // lease_ttl; miss: another holder has it.
  RemoteResult acquire_lease(const Digest128& key, const std::string& token) override;
  // ok: somebody holds the lease; miss: nobody does.
  RemoteResult lease_exists(const Digest128& key) override;
  // Deletes the lease only if it still carries `token` (it may have expired and been re-taken).
  RemoteResult release_lease(const Digest128& key, const std::string& token) override;
  // Input records and program summaries: defined with their layout in store/remote/remote_programs.cpp.
  RemoteResult publish_inputs(const Digest128& digest, std::string_view record, bool* sent) override;
  RemoteResult publish_program(const Digest128& key, const nlohmann::json& summary) override;
  RemoteResult list_programs(RemoteListing* listing) override;
  RemoteResult fetch_inputs(const Digest128& digest) override;
  std::string describe() const override;
  // doctor: whether the nodes sharing the server sign alike (store/remote/redis_check.cpp).
  std::vector<RemoteFinding> check(bool read_only) override;

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

  RedisEndpoint endpoint_;
  RemoteConfig config_;
  std::string namespace_;
  std::unique_ptr<State> state_;
};
}  // namespace jitcache
