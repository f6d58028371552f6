#include "tools/lib/recorded_input_source.hpp"

namespace jitcache::tool {
namespace {

// The first hit of `load` over the store then the packs; else the first refusal, else a miss.
template <typename StoreLoad, typename PackLoad>
LoadResult first_hit(DiskStore* store, const std::vector<std::unique_ptr<PackReader>>& packs, StoreLoad from_store,
                     PackLoad from_pack) {
  LoadResult answer;
  auto consider = [&](LoadResult result, const std::string& where) {
    if (result.status == LoadStatus::miss) return false;
    if (result.status == LoadStatus::hit) {
      answer = std::move(result);
      return true;
    }
    if (answer.status == LoadStatus::miss) {
      answer = std::move(result);
      answer.reason = where + ": " + answer.reason;
    }
    return false;
  };
  if (store && consider(from_store(*store), "store")) return answer;
  for (const auto& pack : packs) {
    if (consider(from_pack(*pack), pack->path().string())) return answer;
  }
  return answer;
}

}  // namespace

RecordedInputSource::RecordedInputSource(std::unique_ptr<DiskStore> store, const std::string& packs,
                                         const std::string& pack_keys, std::vector<std::string>* warnings)
    : store_(std::move(store)) {
  packs_ = PackSet::open(packs, load_pack_trust(pack_keys, warnings), warnings);
}

LoadResult RecordedInputSource::inputs(const Digest128& digest) const {
  return first_hit(
      store_.get(), packs(), [&](DiskStore& store) { return store.load_inputs(digest); },
      [&](const PackReader& pack) { return pack.load_input(digest); });
}

LoadResult RecordedInputSource::entry(const Digest128& key) const {
  return first_hit(
      store_.get(), packs(), [&](DiskStore& store) { return store.load(key); },
      [&](const PackReader& pack) { return pack.load(key, /*whole_sidecar=*/true); });
}

std::string join_pack_paths(const std::vector<std::string>& paths, const std::string& more) {
  std::string joined;
  for (const std::string& path : paths) joined += (joined.empty() ? "" : ":") + path;
  if (!more.empty()) joined += (joined.empty() ? "" : ":") + more;
  return joined;
}

}  // namespace jitcache::tool
