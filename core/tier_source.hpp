// Where the engine gets the pack and remote tiers (store/tiers/tiers.hpp): the factory the program
// linked in (the `jitcache` tool calls link_tiers at start), else libjitcache-tiers.so next to
// the shim, loaded on the first call (platform::load_tier_plugin). The engine asks only when
// JITCACHE_PACKS or JITCACHE_REMOTE is set: other processes never map libcrypto or hiredis.
#pragma once

#include <string>

namespace jitcache {

struct TierFactory;

void link_tiers(const TierFactory& factory);

// The factory, or null and why (the same answer on every call).
const TierFactory* tier_factory(std::string* why);

}  // namespace jitcache
