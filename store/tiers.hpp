// The tiers that need libcrypto or hiredis (packs: SHA-256 + Ed25519; the Redis remote: hiredis +
// HMAC-SHA256), behind a factory the engine asks only when JITCACHE_PACKS or JITCACHE_REMOTE is
// set. The shim gets it from libjitcache-tiers.so, loaded next to libjitcache.so on first use, so
// that a process configuring neither never maps those libraries (docs/design-decisions.md); the
// `jitcache` tool links the same factory (linked_tiers()). Both sides are built from one tree:
// C++ types cross the boundary, guarded by kTierAbi and a layout check.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/disk_store.hpp"
#include "store/remote_store.hpp"

namespace jitcache {

struct PackLookup {
  LoadResult result;           // hit, miss, corrupt (the first refusal, when no pack served it) or error
  std::filesystem::path pack;  // the pack that answered (hit) or refused (corrupt)
};

// The read-only pack tier the engine asks (store/pack_set.hpp implements it).
class PackTier {
 public:
  virtual ~PackTier() = default;
  virtual bool empty() const = 0;
  // The first pack that holds `key` and whose entry checks out.
  virtual PackLookup load(const Digest128& key) const = 0;
  // The driver refused the binary a pack served: not served from packs again in this process.
  virtual void refuse(const Digest128& key) = 0;
};

// What the engine's remote tier (core/remote_tier.hpp) asks of the Redis server: RemoteStore's
// calls and store/remote_programs.hpp's publishing, with their meanings.
class RemoteClient {
 public:
  virtual ~RemoteClient() = default;
  virtual RemoteResult load(const Digest128& key) = 0;
  virtual RemoteResult save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) = 0;
  virtual RemoteResult acquire_lease(const Digest128& key, const std::string& token) = 0;
  virtual RemoteResult lease_exists(const Digest128& key) = 0;
  virtual RemoteResult release_lease(const Digest128& key, const std::string& token) = 0;
  virtual RemoteResult publish_inputs(const Digest128& digest, std::string_view record, bool* sent) = 0;
  virtual RemoteResult publish_program(const Digest128& key, const nlohmann::json& summary) = 0;
};

// Bump whenever anything crossing the boundary changes (these classes, the types they pass).
inline constexpr int kTierAbi = 1;
// A cheap check that both sides see the same layouts (a plugin from another build is refused).
inline constexpr std::size_t kTierLayout = sizeof(PackLookup) * 1000003 + sizeof(RemoteResult) * 1009 +
                                           sizeof(RemoteConfig) * 31 + sizeof(nlohmann::json);

struct TierFactory {
  int abi = kTierAbi;  // first: read before anything else
  std::size_t layout = kTierLayout;
  // JITCACHE_PACKS (`spec`) with the keys of JITCACHE_PACK_KEYS; warnings name every pack left out.
  std::unique_ptr<PackTier> (*open_packs)(std::string_view spec, std::string_view key_files,
                                          std::vector<std::string>* warnings) = nullptr;
  std::unique_ptr<RemoteClient> (*open_remote)(RemoteConfig config) = nullptr;
};

// The factory over store/pack_set.hpp and store/remote_store.hpp, linked in (jitcache_tiers).
const TierFactory& linked_tiers();

// The plugin's one export: its factory, or null when `abi` is not the plugin's.
inline constexpr const char* kTierPluginFile = "libjitcache-tiers.so";
inline constexpr const char* kTierPluginEntry = "jitcache_tiers";
using TierPluginEntry = const TierFactory* (*)(int abi);

}  // namespace jitcache
