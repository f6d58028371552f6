#include "store/size_ledger.hpp"

#include <charconv>
#include <cstdio>

namespace jitcache::store_detail {
namespace {

constexpr std::string_view kMagic = "jitcache-size 1 ";
constexpr std::size_t kNumberWidth = 20;  // digits of the largest uint64
// "jitcache-size 1 clean bytes=<20 digits> entries=<20 digits>\n"
constexpr std::size_t kRecordLength = kMagic.size() + 5 + 7 + kNumberWidth + 9 + kNumberWidth + 1;

std::string padded(std::uint64_t value) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(value));
  return digits;
}

bool take(std::string_view* text, std::string_view expected) {
  if (text->substr(0, expected.size()) != expected) return false;
  text->remove_prefix(expected.size());
  return true;
}

bool take_number(std::string_view* text, std::uint64_t* value) {
  if (text->size() < kNumberWidth) return false;
  std::string_view digits = text->substr(0, kNumberWidth);
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  if (error != std::errc() || end != digits.data() + digits.size()) return false;
  text->remove_prefix(kNumberWidth);
  return true;
}

}  // namespace

std::string format_size_record(const SizeRecord& record) {
  std::string text(kMagic);
  text += record.dirty ? "dirty" : "clean";
  text += " bytes=" + padded(record.totals.bytes);
  text += " entries=" + padded(record.totals.entries);
  text += "\n";
  return text;
}

std::optional<SizeRecord> parse_size_record(std::string_view text) {
  if (text.size() != kRecordLength || !take(&text, kMagic)) return std::nullopt;
  SizeRecord record;
  if (take(&text, "dirty")) {
    record.dirty = true;
  } else if (!take(&text, "clean")) {
    return std::nullopt;
  }
  if (!take(&text, " bytes=") || !take_number(&text, &record.totals.bytes)) return std::nullopt;
  if (!take(&text, " entries=") || !take_number(&text, &record.totals.entries)) return std::nullopt;
  if (text != "\n") return std::nullopt;
  return record;
}

std::error_code SizeLedger::begin(const StoreLayout& layout, std::chrono::milliseconds wait,
                                  bool may_write, std::optional<SizeLedger>* ledger) {
  ledger->reset();
  SizeLedger held(layout, may_write);
  std::optional<SizeRecord> record;
  if (may_write) {
    if (auto error = fileops::FileLock::acquire(layout.dir(), layout.size_lock(), wait, &held.lock_)) return error;
    if (auto error = fileops::File::open_or_create(layout.dir(), layout.size_record(), &held.record_)) return error;
    std::string text;
    if (auto error = held.record_.read_at(0, kRecordLength + 1, &text)) return error;
    record = parse_size_record(text);
  } else {
    // Read-only: no lock file may be created; a torn or dirty read just means "scan".
    fileops::File file;
    std::string text;
    if (!fileops::File::open_read(layout.dir(), layout.size_record(), &file) &&
        !file.read_at(0, kRecordLength + 1, &text)) {
      record = parse_size_record(text);
    }
  }
  if (record && !record->dirty) {
    held.totals_ = record->totals;
  } else if (auto error = held.rescan()) {
    return error;
  }
  ledger->emplace(std::move(held));
  return {};
}

std::error_code SizeLedger::rescan() {
  totals_ = totals_of(scan_store(*layout_));
  rescanned_ = true;
  invalid_ = false;
  return finish();
}

std::error_code SizeLedger::mark_dirty() {
  if (!may_write_) return std::make_error_code(std::errc::read_only_file_system);
  if (dirty_) return {};
  if (auto error = record_.write_at(0, format_size_record({totals_, true}))) return error;
  dirty_ = true;
  return {};
}

void SizeLedger::apply(const EntryFootprint& before, const EntryFootprint& after) {
  // The old footprint is part of the total unless something outside jitcache changed the entry
  // (a sidecar edited by hand, a copy from elsewhere): then the total is wrong, and subtracting
  // would wrap it to ~2^64 and evict everything. Count again instead (the entry is already in
  // its new state).
  if (before.bytes > totals_.bytes || (before.committed && totals_.entries == 0)) {
    if (rescan()) invalidate();
    return;
  }
  // Unsigned wrap-around cancels out: the sum over all entries is never negative.
  totals_.bytes += after.bytes - before.bytes;
  totals_.entries += static_cast<std::uint64_t>(after.committed) -
                     static_cast<std::uint64_t>(before.committed);
}

void SizeLedger::invalidate() {
  if (!mark_dirty()) invalid_ = true;
}

std::error_code SizeLedger::finish() {
  if (!may_write_ || invalid_) return {};
  // A fixed-length record rewritten in place: no truncation, no temp file needed. A torn write
  // (crash) fails to parse and triggers a rescan.
  if (auto error = record_.write_at(0, format_size_record({totals_, false}))) return error;
  dirty_ = false;
  fileops::FileInfo info;
  if (!record_.info(&info) && info.size > kRecordLength) return record_.truncate(kRecordLength);
  return {};
}

}  // namespace jitcache::store_detail
