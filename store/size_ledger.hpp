// Exact size accounting shared by every process using one store.
//
// <root>/size holds one fixed-length text record: state (clean/dirty), bytes, entries. Every
// change to committed entries happens while holding the flock on <root>/size.lock, in this order:
//   measure the entry, mark the record dirty, rename/unlink files, measure again,
//   write the record clean with totals += after - before.
// Measuring under the lock makes the delta exact even when another process replaced the same key
// a moment ago. A record that is missing, unparsable or still dirty when the lock is taken means
// an earlier holder died mid-change: the totals are then rebuilt by a full scan.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "store/disk_store.hpp"
#include "store/file_ops.hpp"
#include "store/store_layout.hpp"

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

  // Marks the record dirty before files change (a no-op when already marked).
  std::error_code mark_dirty();
  // Adds the change of one entry, measured before and after the file operations.
  void apply(const EntryFootprint& before, const EntryFootprint& after);
  // Files changed outside the protocol (damage found by a check): the recorded totals no longer
  // describe them. Leaves the record dirty, so that the next holder recounts.
  void invalidate();
  // Writes the totals back as a clean record (unless invalidated).
  std::error_code finish();

  // Full scan under the held lock; rewrites the record (when writable).
  std::error_code rescan();

 private:
  SizeLedger(const StoreLayout& layout, bool may_write) : layout_(&layout), may_write_(may_write) {}

  const StoreLayout* layout_;
  bool may_write_;
  fileops::FileLock lock_;
  fileops::File record_;  // open only when writable
  SizeInfo totals_;
  bool rescanned_ = false;
  bool dirty_ = false;
  bool invalid_ = false;
};

}  // namespace jitcache::store_detail
