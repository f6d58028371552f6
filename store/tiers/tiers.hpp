// The tiers that need libcrypto, hiredis or libcurl (packs: SHA-256 + Ed25519; the remotes: hiredis,
// libcurl, HMAC-SHA256), behind a factory the engine asks only when JITCACHE_PACKS or JITCACHE_REMOTE is
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
#include "store/pack/pack_tier.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

// Bump whenever anything crossing the boundary changes (these classes, the types they pass).
inline constexpr int kTierAbi = 5;  // 5: remote schemes as registrations, RemoteClient::check
// A cheap check that both sides see the same layouts (a plugin from another build is refused).
inline constexpr std::size_t kTierLayout = sizeof(PackLookup) * 1000003 + sizeof(RemoteResult) * 1009 +
                                           sizeof(RemoteConfig) * 31 + sizeof(nlohmann::json);

struct TierFactory {
  int abi = kTierAbi;  // first: read before anything else
  std::size_t layout = kTierLayout;
  // JITCACHE_PACKS (`spec`) with the keys of JITCACHE_PACK_KEYS; warnings name every pack left out.
  std::unique_ptr<PackTier> (*open_packs)(std::string_view spec, std::string_view key_files,
                                          std::vector<std::string>* warnings) = nullptr;
  // The URL schemes of the remotes (store/remote/remote_schemes.hpp): each row parses its URLs
  // into an endpoint that opens its client.
  RemoteSchemes (*remote_schemes)() = nullptr;
};

// The factory over store/pack/pack_set.hpp and store/remote/remote_schemes.hpp, linked in (jitcache_tiers).
const TierFactory& linked_tiers();

// The plugin's one export: its factory, or null when `abi` is not the plugin's.
inline constexpr const char* kTierPluginFile = "libjitcache-tiers.so";
inline constexpr const char* kTierPluginEntry = "jitcache_tiers";
using TierPluginEntry = const TierFactory* (*)(int abi);

}  // namespace jitcache
