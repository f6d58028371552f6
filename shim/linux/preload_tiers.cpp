// With JITCACHE_PACKS or JITCACHE_REMOTE in the environment, libjitcache-tiers.so (libcrypto,
// hiredis) is loaded with the shim, at the process start, as those libraries were before they
// moved there, rather than in the app's first build call, whose time it would add to (about 1.3 ms
// on PoCL: docs/benchmarks.md, Part 8). Set only in jitcache.conf, they are loaded when the engine
// starts. Whether it loaded is remembered; the engine warns about a failure, once per tier.
#include <stdlib.h>

#include <string>

#include "core/tier_source.hpp"

namespace {

bool is_set(const char* name) {
  const char* value = ::getenv(name);
  return value && *value;
}

__attribute__((constructor)) void load_configured_tiers() {
  if (!is_set("JITCACHE_PACKS") && !is_set("JITCACHE_REMOTE")) return;
  std::string why;
  jitcache::tier_factory(&why);
}

}  // namespace
