#include "store/tiers/tiers.hpp"

#include "store/pack/pack_set.hpp"
#include "store/remote/remote_schemes.hpp"

namespace jitcache {
namespace {

std::unique_ptr<PackTier> open_packs(std::string_view spec, std::string_view key_files,
                                     std::vector<std::string>* warnings) {
  const PackTrust trust = load_pack_trust(key_files, warnings);
  return PackSet::open(spec, trust, warnings);
}

}  // namespace

const TierFactory& linked_tiers() {
  static const TierFactory factory{kTierAbi, kTierLayout, open_packs, remote_schemes};
  return factory;
}

}  // namespace jitcache
