// libjitcache-tiers.so: packs and the Redis remote (libcrypto, hiredis) for the shim, which loads
// it only when JITCACHE_PACKS or JITCACHE_REMOTE is set (core/tier_source.hpp). Its one export.
#include "store/tiers/tiers.hpp"

extern "C" __attribute__((visibility("default"))) const jitcache::TierFactory* jitcache_tiers(int abi) {
  return abi == jitcache::kTierAbi ? &jitcache::linked_tiers() : nullptr;
}
