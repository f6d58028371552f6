// The listing index (docs/store-format.md, "The index"): <root>/index/<k0k1>, one file per level-1
// shard, listing its entries with their size and a summary of their sidecar (the fields `ls`,
// `show` and `pack create`'s filters read), so that listing a big store reads 256 files instead of
// every sidecar. It is a cache of the truth: an index is used only when it names the generation
// its shard's size record has now (store/local/shard_records.hpp: every change to the shard's files
// bumps it under size.lock) and its checksum, bounds and owner hold; anything else, a missing one
// too, means the shard is scanned and its index written anew. Every listed entry is still
// stat()ed: its last use is the file's, and one gone since is left out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"

namespace jitcache::store_detail {

struct IndexedEntry {
  Digest128 key;
  std::uint64_t bytes = 0;
  nlohmann::json summary;  // the sidecar's summary fields (kSummaryFields), null when unreadable
};

// The sidecar fields an index keeps.
extern const std::vector<std::string> kSummaryFields;
nlohmann::json sidecar_summary(const nlohmann::json& sidecar);

inline constexpr std::uint64_t kMaxIndexBytes = 256ull << 20;

std::string format_shard_index(int slot, std::uint64_t generation, const std::vector<IndexedEntry>& entries);
// Nullopt when `text` is not an intact index of shard `slot` at `generation`.
std::optional<std::vector<IndexedEntry>> parse_shard_index(int slot, std::uint64_t generation, std::string_view text);

}  // namespace jitcache::store_detail
