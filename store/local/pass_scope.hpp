// Which shards one automatic eviction or maintenance pass looks at (docs/store-format.md, "Size
// accounting and eviction"). A pass after a save must cost the app a bounded amount of work
// whatever the store's size, as ccache cleans one level-1 folder at a time: it scans whole level-1
// shards, chosen from their size records without a scan, until they hold StoreLimits::pass_entries
// (or part of one shard that alone holds more). A store that small is scanned whole, as every pass
// did before.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "store/local/shard_records.hpp"

namespace jitcache::store_detail {

class StoreLayout;

struct PassScope {
  std::vector<int> slots;   // the shards to scan
  bool whole_store = false; // every shard holding entries is among them
  int next_cursor = 0;      // where the next round-robin pass starts (0: a cycle is complete)
  // When the fullest shard alone holds more than the budget (a big store: 3 900 entries a shard
  // at a million), only part of it: its level-2 folders from `first_inner` on until they held
  // `part_entries` entries (store_detail::scan_shard_part). 0: whole shards.
  std::uint64_t part_entries = 0;
  int first_inner = 0;
};

// Over the size limit: the fullest shards (by bytes) first, or part of the fullest one, from
// level-2 folder `first_inner` on (the caller varies it from pass to pass).
PassScope fullest_shards(const std::array<ShardRecord, kSlotCount>& records, std::uint64_t budget, int first_inner);
// The periodic pass (age limit, sweeps): shards in order from `cursor` on, so that passes take turns.
PassScope shards_from(const std::array<ShardRecord, kSlotCount>& records, int cursor, std::uint64_t budget);

// The maintenance stamp (<root>/last_maintenance): its mtime is when the last periodic pass ran, its
// text where the next one starts ("next <slot>"; anything else reads as 0).
int read_pass_cursor(const StoreLayout& layout);
void write_pass_stamp(const StoreLayout& layout, int next_cursor);

}  // namespace jitcache::store_detail
