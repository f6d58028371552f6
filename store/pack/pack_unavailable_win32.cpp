// Windows builds (MinGW) have no libcrypto to check pack checksums and signatures with: packs are
// not read there, and a JITCACHE_PACKS setting says so once.
#include "store/pack/pack_set.hpp"

namespace jitcache {

PackTrust load_pack_trust(std::string_view key_files, std::vector<std::string>*) {
  PackTrust trust;
  trust.required = !key_files.empty();
  return trust;
}

std::unique_ptr<PackSet> PackSet::open(std::string_view spec, const PackTrust&, std::vector<std::string>* warnings) {
  if (!spec.empty()) warnings->push_back("packs are not supported in this build (Windows): JITCACHE_PACKS ignored");
  return std::make_unique<PackSet>();
}

PackLookup PackSet::load(const Digest128&) const { return {}; }

void PackSet::refuse(const Digest128&) {}

}  // namespace jitcache
