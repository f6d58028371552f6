#include "store/local/pass_scope.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "store/local/store_layout.hpp"

namespace jitcache::store_detail {
namespace {

// Takes shards in `order` until they hold `budget` entries; empty shards are skipped.
PassScope take(const std::array<ShardRecord, kSlotCount>& records, const std::vector<int>& order,
               std::uint64_t budget) {
  PassScope scope;
  std::uint64_t entries = 0, total = 0;
  for (int slot = 0; slot < kShardCount; ++slot) total += records[static_cast<std::size_t>(slot)].totals.entries;
  std::size_t next = 0;
  for (; next < order.size() && entries < budget; ++next) {
    const std::uint64_t held = records[static_cast<std::size_t>(order[next])].totals.entries;
    if (held == 0) continue;
    scope.slots.push_back(order[next]);
    entries += held;
  }
  scope.whole_store = entries >= total;
  scope.next_cursor = next < order.size() && !scope.whole_store ? order[next] : 0;
  return scope;
}

}  // namespace

PassScope fullest_shards(const std::array<ShardRecord, kSlotCount>& records, std::uint64_t budget, int first_inner) {
  std::vector<int> order(kShardCount);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return records[static_cast<std::size_t>(a)].totals.bytes > records[static_cast<std::size_t>(b)].totals.bytes;
  });
  if (records[static_cast<std::size_t>(order[0])].totals.entries > budget) {
    PassScope part;
    part.slots = {order[0]};
    part.part_entries = std::max<std::uint64_t>(budget, 1);
    part.first_inner = std::clamp(first_inner, 0, kShardCount - 1);
    return part;
  }
  return take(records, order, budget);
}

PassScope shards_from(const std::array<ShardRecord, kSlotCount>& records, int cursor, std::uint64_t budget) {
  std::vector<int> order;
  for (int slot = std::clamp(cursor, 0, kShardCount - 1); slot < kShardCount; ++slot) order.push_back(slot);
  PassScope scope = take(records, order, budget);
  // The tail of a cycle: the shards before the cursor were covered by earlier passes.
  if (cursor > 0) scope.whole_store = false;
  return scope;
}

int read_pass_cursor(const StoreLayout& layout) {
  fileops::File file;
  std::string text;
  if (fileops::File::open_read(layout.dir(), layout.maintenance_stamp(), &file, 64) || file.read_all(&text, 64)) return 0;
  int cursor = 0;
  if (text.rfind("next ", 0) != 0) return 0;
  const char* begin = text.data() + 5;
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), cursor);
  if (error != std::errc() || cursor < 0 || cursor >= kShardCount) return 0;
  return cursor;
}

void write_pass_stamp(const StoreLayout& layout, int next_cursor) {
  fileops::File file;
  if (fileops::File::open_or_create(layout.dir(), layout.maintenance_stamp(), &file)) return;
  const std::string text = "next " + std::to_string(next_cursor) + "\n";
  if (file.write_at(0, text)) return;
  (void)file.truncate(text.size());
  (void)file.touch_now();
}

}  // namespace jitcache::store_detail
