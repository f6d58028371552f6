#include "store/local/shard_records.hpp"

#include "store/local/record_text.hpp"

namespace jitcache::store_detail {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

// "shard ab clean bytes=<20> entries=<20> gen=<20>\n"
const std::size_t kShardRecordLength = 6 + 2 + 1 + 5 + 7 + kNumberWidth + 9 + kNumberWidth + 5 + kNumberWidth + 1;

std::string format_shard_record(int slot, const ShardRecord& record) {
  return "shard " + shard_name(slot) + " " + format_state_totals(record.dirty, record.totals) +
         " gen=" + padded(record.generation) + "\n";
}

std::optional<ShardRecord> parse_shard_record(int slot, std::string_view text) {
  ShardRecord record;
  if (text.size() != kShardRecordLength || !take(&text, "shard " + shard_name(slot) + " ") ||
      !take_state_totals(&text, &record.dirty, &record.totals) || !take(&text, " gen=") ||
      !take_number(&text, &record.generation) || text != "\n") {
    return std::nullopt;
  }
  return record;
}

int shard_slot(const Digest128& key) { return static_cast<int>(key.high >> 56); }

int shard_slot(std::string_view name) {
  if (name.size() < 2) return -1;
  const int high = hex_digit(name[0]), low = hex_digit(name[1]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

std::string shard_name(int slot) {
  if (slot == kInputsSlot) return "in";
  static constexpr char kDigits[] = "0123456789abcdef";
  return {kDigits[(slot >> 4) & 15], kDigits[slot & 15]};
}

}  // namespace jitcache::store_detail
