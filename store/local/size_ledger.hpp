// Exact size accounting shared by every process using one store.
//
// <root>/size holds one fixed-length text record: state (clean/dirty), bytes, entries; <root>/shards/
// one per shard slot (store/local/shard_records.hpp), each its own small file (not slots of one file: an
// app under a low RLIMIT_FSIZE can still write them). Every change to committed entries happens
// while holding the flock on <root>/size.lock, in this order:
//   measure the entry, mark the size record dirty, then its shard's slot (its generation + 1),
//   rename/unlink files, measure again, write the slot clean with its totals += after - before,
//   then the size record likewise.
// Measuring under the lock makes the delta exact even when another process replaced the same key
// a moment ago. A size record that is missing, unparsable or still dirty when the lock is taken
// means an earlier holder died mid-change. A dirty one (the usual trace of a crash): the slots that
// are not clean (the shards it was changing) are recounted by a scan of those shards only, and the
// totals are their sum. A missing or unparsable one (removed by hand, a torn write): the whole
// store is counted, every slot rewritten.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "store/files/file_ops.hpp"
#include "store/local/shard_records.hpp"
#include "store/local/store_layout.hpp"
#include "store/local/store_types.hpp"

namespace jitcache::store_detail {

struct SizeRecord {
  SizeInfo totals;
  bool dirty = false;
};

std::string format_size_record(const SizeRecord& record);  // always the same length
std::optional<SizeRecord> parse_size_record(std::string_view text);

// A held size.lock with trusted totals. Destroying it releases the lock; if the record was marked
// dirty and never finished, it stays dirty and the next holder rescans.
class SizeLedger {
 public:
  // Takes the lock (waiting at most `wait`), reads the record and rescans when it is not a clean
  // record. `may_write` false (read-only store): never writes the record, only reads or scans.
  static std::error_code begin(const StoreLayout& layout, std::chrono::milliseconds wait,
                               bool may_write, std::optional<SizeLedger>* ledger);

  const SizeInfo& totals() const { return totals_; }
  bool rescanned() const { return rescanned_; }

  // Marks the records dirty before files in shard `slot` change (a no-op when already marked).
  std::error_code mark_dirty(int slot);
  // Adds the change of one entry of shard `slot`, measured before and after the file operations.
  void apply(int slot, const EntryFootprint& before, const EntryFootprint& after);
  // Files in shard `slot` changed outside the protocol (damage found by a check): the recorded
  // totals no longer describe them. Leaves the records dirty, so that the next holder recounts.
  void invalidate(int slot);
  // Writes the totals back as clean records (unless invalidated).
  std::error_code finish();

  // Full scan under the held lock; rewrites every record (when writable).
  std::error_code rescan();

  // Every shard's record as it is now (a slot that is unreadable or dirty is recounted first), for
  // the eviction's choice of shards and the index's freshness.
  std::error_code shard_records(std::array<ShardRecord, kSlotCount>* records);

 private:
  SizeLedger(const StoreLayout& layout, bool may_write) : layout_(&layout), may_write_(may_write) {}

  // Reads slot `slot` (nullopt when it has no valid record).
  std::optional<ShardRecord> read_slot(int slot) const;
  std::error_code write_slot(int slot, const ShardRecord& record);
  // Counts shard `slot` by a scan and writes its record clean.
  std::error_code recount_slot(int slot, std::uint64_t generation, ShardRecord* record);
  // The totals from the slots, recounting those not clean (a holder died while changing them).
  std::error_code recover_from_slots();

  const StoreLayout* layout_;
  bool may_write_;
  fileops::FileLock lock_;
  fileops::File record_;  // open only when writable
  SizeInfo totals_;
  bool rescanned_ = false;
  bool dirty_ = false;
  bool invalid_ = false;
  // Slots marked dirty in this hold: the generation written, and their totals so far (nullopt:
  // their record was not readable, so they are recounted at finish()).
  struct Touched {
    std::uint64_t generation = 0;
    std::optional<SizeInfo> totals;
  };
  std::map<int, Touched> touched_;
  std::map<int, fileops::File> slot_files_;  // opened for writing in this hold
};

// A shard's record as it is on disk, read without the lock (nullopt: missing, torn or dirty). A
// clean record's generation names exactly the state of the shard's files: writers mark it dirty,
// with a new generation, before they change them.
std::optional<ShardRecord> read_clean_shard_record(const StoreLayout& layout, int slot);

}  // namespace jitcache::store_detail
