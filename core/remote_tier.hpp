// The engine's side of the remote tier: reads the remote_* settings, asks the remotes in order
// after a disk miss, takes part in cluster-wide single-flight (through the first remote), publishes
// built binaries to every remote, counts and warns. Protocol and trust model: docs/remote.md.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"
#include "store/remote_api/remote_client.hpp"
#include "store/tiers/tiers.hpp"

namespace jitcache {

struct Lookup;

class RemoteTier {
 public:
  // nullptr when no remote is configured, or (warned once) when the URL cannot be used or the
  // tiers' library (core/tier_source.hpp) cannot be loaded.
  static std::unique_ptr<RemoteTier> open(const Settings& settings);

  // After a disk miss, each remote in order. A hit fills `lookup` (verdict hit, tier "remote";
  // lookup.remote["remote"]: which one, counted from 0). On a miss this process
  // may now hold the key's lease: it builds, then publish() or abandon(). When another node holds
  // the lease, waits (bounded by remote_lease_wait) for its record instead of building.
  // Records what happened in lookup.remote for the trace.
  void fetch(Lookup& lookup);

  // Background writer: stores the record (unless read-only) and releases this process's lease;
  // then, when the sidecar names the entry's input record (`inputs`: its bytes), publishes that
  // record (once per server) and the entry's program summary for `jitcache warm` elsewhere.
  void publish(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
               std::string_view inputs = {});

  // A hit from a later remote, loaded by the driver: written to the earlier ones (unless
  // read-only, or remote_backfill says no), so that the next host finds it on the first.
  // `remote`: lookup.remote.
  void backfill(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
                const nlohmann::json& remote);

  // The build failed or produced nothing to store: let another node try.
  void abandon(const Digest128& key);

  // Whether this process holds the key's lease: other nodes may be waiting for its record.
  bool holds_lease(const Digest128& key);

  RemoteTier(std::vector<std::unique_ptr<RemoteClient>> remotes, bool read_only, std::chrono::milliseconds lease_wait,
             bool backfill);

 private:
  // Counts a failed or skipped call and warns about it once per kind.
  void note(const RemoteResult& result, const char* during);
  std::string take_lease_token(const Digest128& key);
  // Asks every remote in order; the first hit wins (`*served_by` its index). Without one, the
  // first remote's answer; the others' failures are noted here (`note_rejects`: corrupt ones too).
  RemoteResult load_in_order(const Digest128& key, bool note_rejects, std::size_t* served_by);
  RemoteClient& leader() { return *remotes_.front(); }  // leases: the first remote only
  // Whether later remotes' hits go to the earlier ones (the remote_backfill setting).
  static bool backfills(RemoteBackfill setting, bool signed_records);

  std::vector<std::unique_ptr<RemoteClient>> remotes_;
  bool read_only_;
  bool backfill_;
  std::chrono::milliseconds lease_wait_;
  std::mutex leases_mutex_;
  std::map<std::string, std::string> leases_;  // key hex -> token of a lease this process holds
};

// The remote_* settings, one config per JITCACHE_REMOTE URL; what an unusable setting looks like
// for the tool and the warnings ("" when fine). No config at all when the URL list is refused.
// An HTTPS remote whose remote_ca_file fails the trust rule (trusted_remote_ca_file) is left out.
// `schemes`: the tiers' (TierFactory::remote_schemes).
std::string remote_configs_from(const Settings& settings, RemoteSchemes schemes, std::vector<RemoteConfig>* configs,
                                bool* read_only, std::chrono::milliseconds* lease_wait);

// remote_ca_file decides whose servers an HTTPS remote believes, so it passes the rule of every
// file jitcache trusts for identity (store/files/trusted_file.hpp). The path to hand to TLS (""
// when the setting is empty: the system's authorities), or nullopt with `why`.
std::optional<std::string> trusted_remote_ca_file(const Settings& settings, std::string* why);

}  // namespace jitcache
