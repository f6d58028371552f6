// The read-only pack tier: the packs named by JITCACHE_PACKS (files, or folders whose *.jcpack
// files are taken in name order), opened once, asked in order. Never written. A pack that cannot
// be opened or trusted is left out with a warning; the others serve.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/local/disk_store.hpp"
#include "store/pack/pack_reader.hpp"
#include "store/pack/pack_tier.hpp"

namespace jitcache {

// The trusted keys from a ':'-separated list of PEM files (public keys or key pairs). Listing any
// makes a signature by one of them required, even when none of the files can be read.
PackTrust load_pack_trust(std::string_view key_files, std::vector<std::string>* warnings);

class PackSet final : public PackTier {
 public:
  // `spec`: paths separated by ':'. Warnings name every path left out and why.
  static std::unique_ptr<PackSet> open(std::string_view spec, const PackTrust& trust,
                                       std::vector<std::string>* warnings);

  bool empty() const override { return packs_.empty(); }
  const std::vector<std::unique_ptr<PackReader>>& packs() const { return packs_; }

  // The first pack that holds `key` and whose entry checks out; a refused entry falls through to
  // the next pack.
  PackLookup load(const Digest128& key) const override;
  // The driver refused the binary a pack served: not served from packs again in this process.
  void refuse(const Digest128& key) override;

 private:
  std::vector<std::unique_ptr<PackReader>> packs_;
  mutable std::mutex refused_mutex_;
  std::set<Digest128> refused_;
};

}  // namespace jitcache
