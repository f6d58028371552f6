#include "store/local/size_ledger.hpp"

#include "store/local/record_text.hpp"
#include "store/local/store_layout.hpp"

namespace jitcache::store_detail {
namespace {

constexpr std::string_view kMagic = "jitcache-size 1 ";
// "jitcache-size 1 clean bytes=<20 digits> entries=<20 digits>\n"
constexpr std::size_t kRecordLength = kMagic.size() + 5 + 7 + kNumberWidth + 9 + kNumberWidth + 1;

// A slot's generation after it was lost: the clock, so that it never equals one an index recorded.
std::uint64_t fresh_generation() { return static_cast<std::uint64_t>(fileops::now_ns()); }

}  // namespace

std::string format_size_record(const SizeRecord& record) {
  return std::string(kMagic) + format_state_totals(record.dirty, record.totals) + "\n";
}

std::optional<SizeRecord> parse_size_record(std::string_view text) {
  SizeRecord record;
  if (text.size() != kRecordLength || !take(&text, kMagic) || !take_state_totals(&text, &record.dirty, &record.totals) ||
      text != "\n") {
    return std::nullopt;
  }
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
  } else if (auto error = record ? held.recover_from_slots() : held.rescan()) {
    return error;
  }
  ledger->emplace(std::move(held));
  return {};
}

namespace {

std::optional<ShardRecord> read_shard_record(const StoreLayout& layout, int slot) {
  fileops::File file;
  std::string text;
  if (fileops::File::open_read(layout.dir(), layout.shard_record(slot), &file, kShardRecordLength + 1) ||
      file.read_at(0, kShardRecordLength + 1, &text)) {
    return std::nullopt;
  }
  return parse_shard_record(slot, text);
}

}  // namespace

std::optional<ShardRecord> read_clean_shard_record(const StoreLayout& layout, int slot) {
  std::optional<ShardRecord> record = read_shard_record(layout, slot);
  return record && !record->dirty ? record : std::nullopt;
}

std::optional<ShardRecord> SizeLedger::read_slot(int slot) const {
  return may_write_ ? read_shard_record(*layout_, slot) : std::nullopt;
}

std::error_code SizeLedger::write_slot(int slot, const ShardRecord& record) {
  // An empty shard needs no record (a missing one counts as a scan of a missing folder): a small
  // store keeps a few files, not 257.
  if (record.totals.bytes == 0 && record.totals.entries == 0 && !slot_files_.count(slot)) {
    fileops::FileInfo info;
    if (!layout_->dir().stat(layout_->shard_record(slot), &info) && info.kind == fileops::FileKind::missing) return {};
  }
  fileops::File& file = slot_files_[slot];
  if (!file.is_open()) {
    std::error_code error = fileops::File::open_or_create(layout_->dir(), layout_->shard_record(slot), &file);
    if (error == std::errc::no_such_file_or_directory && !layout_->dir().make_dir(layout_->shard_records())) {
      error = fileops::File::open_or_create(layout_->dir(), layout_->shard_record(slot), &file);
    }
    if (error) return error;
  }
  // Fixed length, rewritten in place; a torn write fails to parse and means "count again".
  return file.write_at(0, format_shard_record(slot, record));
}

std::error_code SizeLedger::recount_slot(int slot, std::uint64_t generation, ShardRecord* record) {
  StoreScan scan;
  if (slot == kInputsSlot) {
    for (const InputRecordFile& file : scan_input_records(*layout_)) scan.input_record_bytes += file.info.size;
  } else {
    scan_shard(*layout_, slot, &scan);
  }
  record->totals = totals_by_slot(scan)[static_cast<std::size_t>(slot)];
  record->generation = generation;
  record->dirty = false;
  if (auto error = write_slot(slot, *record)) return error;
  const auto file = slot_files_.find(slot);  // whatever else was there: gone
  return file == slot_files_.end() ? std::error_code() : file->second.truncate(kShardRecordLength);
}

std::error_code SizeLedger::recover_from_slots() {
  if (!may_write_) return rescan();
  SizeInfo sum;
  for (int slot = 0; slot < kSlotCount; ++slot) {
    std::optional<ShardRecord> record = read_slot(slot);
    if (!record || record->dirty) {
      ShardRecord counted;
      if (auto error = recount_slot(slot, record ? record->generation : fresh_generation(), &counted)) return error;
      record = counted;
    }
    sum.bytes += record->totals.bytes;
    sum.entries += record->totals.entries;
  }
  totals_ = sum;
  invalid_ = false;
  return finish();
}

std::error_code SizeLedger::rescan() {
  const StoreScan scan = scan_store(*layout_);
  totals_ = totals_of(scan);
  rescanned_ = true;
  invalid_ = false;
  if (may_write_) {
    const auto by_slot = totals_by_slot(scan);
    for (int slot = 0; slot < kSlotCount; ++slot) {
      const std::optional<ShardRecord> old = read_slot(slot);
      ShardRecord record{by_slot[static_cast<std::size_t>(slot)], old ? old->generation + 1 : fresh_generation(), false};
      if (auto error = write_slot(slot, record)) return error;
    }
  }
  touched_.clear();  // counted just now
  return finish();
}

std::error_code SizeLedger::shard_records(std::array<ShardRecord, kSlotCount>* records) {
  if (!may_write_) {  // read-only: nothing may be written, count instead
    const auto by_slot = totals_by_slot(scan_store(*layout_));
    for (std::size_t slot = 0; slot < records->size(); ++slot) (*records)[slot] = {by_slot[slot], 0, false};
    return {};
  }
  for (int slot = 0; slot < kSlotCount; ++slot) {
    std::optional<ShardRecord> record = read_slot(slot);
    if (!record || record->dirty) {
      ShardRecord counted;
      if (auto error = recount_slot(slot, record ? record->generation + 1 : fresh_generation(), &counted)) return error;
      record = counted;
    }
    (*records)[static_cast<std::size_t>(slot)] = *record;
  }
  return {};
}

std::error_code SizeLedger::mark_dirty(int slot) {
  if (!may_write_) return std::make_error_code(std::errc::read_only_file_system);
  if (!dirty_) {
    if (auto error = record_.write_at(0, format_size_record({totals_, true}))) return error;
    dirty_ = true;
  }
  if (touched_.count(slot)) return {};
  const std::optional<ShardRecord> record = read_slot(slot);
  Touched touched;
  touched.generation = record ? record->generation + 1 : fresh_generation();
  if (record && !record->dirty) touched.totals = record->totals;
  ShardRecord marked{record ? record->totals : SizeInfo{}, touched.generation, true};
  if (auto error = write_slot(slot, marked)) return error;
  touched_[slot] = touched;
  return {};
}

namespace {

// Whether `before` can have been counted in `totals`: not when something outside jitcache changed
// the entry (a sidecar edited by hand, a copy from elsewhere). Subtracting then would wrap the
// total to ~2^64 and evict everything.
bool counted_in(const SizeInfo& totals, const EntryFootprint& before) {
  return before.bytes <= totals.bytes && !(before.committed && totals.entries == 0);
}

void add(SizeInfo* totals, const EntryFootprint& before, const EntryFootprint& after) {
  // Unsigned wrap-around cancels out: the sum over all entries is never negative.
  totals->bytes += after.bytes - before.bytes;
  totals->entries += static_cast<std::uint64_t>(after.committed) - static_cast<std::uint64_t>(before.committed);
}

}  // namespace

void SizeLedger::apply(int slot, const EntryFootprint& before, const EntryFootprint& after) {
  if (!counted_in(totals_, before)) {  // count again instead (the entry is already in its new state)
    if (rescan()) invalidate(slot);
    return;
  }
  add(&totals_, before, after);
  const auto touched = touched_.find(slot);
  if (touched == touched_.end() || !touched->second.totals) return;
  if (counted_in(*touched->second.totals, before)) {
    add(&*touched->second.totals, before, after);
  } else {
    touched->second.totals.reset();  // recounted at finish()
  }
}

void SizeLedger::invalidate(int slot) {
  if (!mark_dirty(slot)) invalid_ = true;
}

std::error_code SizeLedger::finish() {
  if (!may_write_ || invalid_) return {};
  // Slots first, the size record last: a clean size record means every slot is clean too.
  for (const auto& [slot, touched] : touched_) {
    ShardRecord record;
    if (touched.totals) {
      record = {*touched.totals, touched.generation, false};
      if (auto error = write_slot(slot, record)) return error;
    } else if (auto error = recount_slot(slot, touched.generation, &record)) {
      return error;
    }
  }
  touched_.clear();
  slot_files_.clear();
  // A fixed-length record rewritten in place: no truncation, no temp file needed. A torn write
  // (crash) fails to parse and triggers a recount.
  if (auto error = record_.write_at(0, format_size_record({totals_, false}))) return error;
  dirty_ = false;
  fileops::FileInfo info;
  if (!record_.info(&info) && info.size > kRecordLength) return record_.truncate(kRecordLength);
  return {};
}

}  // namespace jitcache::store_detail
