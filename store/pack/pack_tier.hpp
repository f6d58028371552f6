// What the engine asks of packs (store/pack/pack_set.hpp implements it; the engine reaches it
// through the tiers' factory, store/tiers/tiers.hpp).
#pragma once

#include <filesystem>

#include "hashing/digest.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {

struct PackLookup {
  LoadResult result;           // hit, miss, corrupt (the first refusal, when no pack served it) or error
  std::filesystem::path pack;  // the pack that answered (hit) or refused (corrupt)
};

// The read-only pack tier the engine asks (store/pack/pack_set.hpp implements it).
class PackTier {
 public:
  virtual ~PackTier() = default;
  virtual bool empty() const = 0;
  // The first pack that holds `key` and whose entry checks out.
  virtual PackLookup load(const Digest128& key) const = 0;
  // The driver refused the binary a pack served: not served from packs again in this process.
  virtual void refuse(const Digest128& key) = 0;
};

}  // namespace jitcache
