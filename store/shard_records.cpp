#include "store/shard_records.hpp"

#include "store/record_text.hpp"

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
  std::string text = "shard " + shard_name(slot) + (record.dirty ? " dirty" : " clean");
  text += " bytes=" + padded(record.totals.bytes);
  text += " entries=" + padded(record.totals.entries);
  text += " gen=" + padded(record.generation) + "\n";
  return text;
}

std::optional<ShardRecord> parse_shard_record(int slot, std::string_view text) {
  if (text.size() != kShardRecordLength || !take(&text, "shard " + shard_name(slot))) return std::nullopt;
  ShardRecord record;
  if (take(&text, " dirty")) {
    record.dirty = true;
  } else if (!take(&text, " clean")) {
    return std::nullopt;
  }
  if (!take(&text, " bytes=") || !take_number(&text, &record.totals.bytes)) return std::nullopt;
  if (!take(&text, " entries=") || !take_number(&text, &record.totals.entries)) return std::nullopt;
  if (!take(&text, " gen=") || !take_number(&text, &record.generation)) return std::nullopt;
  if (text != "\n") return std::nullopt;
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
