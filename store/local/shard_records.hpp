// Per-shard size records (docs/store-format.md, "Per-shard records"): <root>/shards/<k0k1>, one
// fixed-length record per level-1 shard folder (256 of them) and shards/in for the recorded
// inputs, each "state bytes entries generation"; an empty shard may have none. They change with
// the size record, under
// size.lock (store/local/size_ledger.hpp), and let a process that finds the size record dirty recount
// only the shards that were being changed, let eviction pick the fullest shards without a scan,
// and tell a shard's index (store/local/shard_index.hpp) whether it is current: the generation grows by
// one whenever files in the shard change.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hashing/digest.hpp"
#include "store/local/store_types.hpp"

namespace jitcache::store_detail {

inline constexpr int kShardCount = 256;
inline constexpr int kInputsSlot = kShardCount;  // recorded inputs: bytes, no entries
inline constexpr int kSlotCount = kShardCount + 1;

struct ShardRecord {
  SizeInfo totals;
  std::uint64_t generation = 0;
  bool dirty = false;
};

// Always kShardRecordLength bytes.
std::string format_shard_record(int slot, const ShardRecord& record);
std::optional<ShardRecord> parse_shard_record(int slot, std::string_view text);
extern const std::size_t kShardRecordLength;

// The slot of a key's shard (its first two hex digits), of a shard folder's name, and back.
int shard_slot(const Digest128& key);
int shard_slot(std::string_view key_hex_or_shard_name);
std::string shard_name(int slot);  // "00".."ff"; "in" for the inputs slot

}  // namespace jitcache::store_detail
