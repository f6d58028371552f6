// Where `jitcache warm` and `jitcache replay` find a recorded program: its inputs record
// (hashing/recorded_inputs.hpp) and the entry recorded with it. The local store first, then packs
// (`warm --pack`, then JITCACHE_PACKS): a vendor's pack that carries its inputs can be warmed on a
// machine whose driver no longer matches its binaries. Packs are opened with the tier's rules
// (trust, signature); every record read is checked as the store checks its own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/disk_store.hpp"
#include "store/pack_set.hpp"

namespace jitcache::tool {

class RecordedInputSource {
 public:
  // `store` may be null (no usable store); `packs` is a ':'-separated list of pack files and folders.
  // Packs left out are named in `warnings`.
  RecordedInputSource(std::unique_ptr<DiskStore> store, const std::string& packs, const std::string& pack_keys,
                      std::vector<std::string>* warnings);

  // The record's bytes (LoadResult::binary): hit, miss (nowhere), corrupt or error (the first refusal).
  LoadResult inputs(const Digest128& digest) const;
  // The recorded entry (its sidecar names the key components the rebuild must reproduce).
  LoadResult entry(const Digest128& key) const;

  const std::vector<std::unique_ptr<PackReader>>& packs() const { return packs_->packs(); }

 private:
  std::unique_ptr<DiskStore> store_;
  std::unique_ptr<PackSet> packs_;
};

// "a:b" from a list of paths (the JITCACHE_PACKS form).
std::string join_pack_paths(const std::vector<std::string>& paths, const std::string& more = {});

}  // namespace jitcache::tool
