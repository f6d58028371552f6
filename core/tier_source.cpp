#include "core/tier_source.hpp"

#include <atomic>

#include "core/platform.hpp"

namespace jitcache {
namespace {

std::atomic<const TierFactory*> g_linked_tiers{nullptr};

}  // namespace

void link_tiers(const TierFactory& factory) { g_linked_tiers = &factory; }

const TierFactory* tier_factory(std::string* why) {
  if (const TierFactory* linked = g_linked_tiers.load()) return linked;
  struct Loaded {
    const TierFactory* factory = nullptr;
    std::string why;
  };
  static const Loaded loaded = [] {
    Loaded result;
    result.factory = platform::load_tier_plugin(&result.why);
    return result;
  }();
  if (!loaded.factory) *why = loaded.why;
  return loaded.factory;
}

}  // namespace jitcache
