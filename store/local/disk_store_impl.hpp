// DiskStore's private state and helpers, shared by disk_store.cpp (entry operations) and
// store_maintenance.cpp (eviction, sweeping, verify, clear, listing).
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "store/files/atomic_file.hpp"
#include "store/local/disk_store.hpp"
#include "store/local/entry_check.hpp"
#include "store/local/pass_scope.hpp"
#include "store/local/size_ledger.hpp"
#include "store/local/store_layout.hpp"

namespace jitcache {

namespace store_detail {
// How long an operation waits for another process's size.lock. Short where the application
// waits for the answer (load, remove), longer for background saves and the tool.
inline constexpr std::chrono::milliseconds kShortLockWait{500};
inline constexpr std::chrono::milliseconds kLongLockWait{5000};

inline constexpr std::int64_t kSecondNs = 1000000000;
// Temp files and binaries without a sidecar this old belong to no live writer.
inline constexpr std::int64_t kStaleAfterNs = 3600 * kSecondNs;
// Quarantined files are kept this long for inspection, then swept.
inline constexpr std::int64_t kQuarantineKeepNs = 7 * 24 * 3600 * kSecondNs;
// A save runs the periodic maintenance pass (age eviction + sweep) when the store is not over its
// size limit: each pass covers a few shards (store/local/pass_scope.hpp); a cycle over every shard
// starts at most this often, and its passes follow each other at least kMaintenanceStepNs apart.
inline constexpr std::int64_t kMaintenanceIntervalNs = 3600 * kSecondNs;
inline constexpr std::int64_t kMaintenanceStepNs = 60 * kSecondNs;

// Writes data to `file`'s temporary, a new file in tmp/ (layout.new_temp_file(suffix)), making
// tmp/ when it is missing: the store's open does not make it (disk_store.cpp). `file` is
// AtomicFile(layout.dir()); committing it puts the data in place.
std::error_code write_temp_file(const StoreLayout& layout, std::string_view data, std::string_view suffix,
                                fileops::AtomicFile* file);

// Locks the file that `path` names now, even when holders remove and recreate it (key_lock.cpp).
std::error_code lock_current_file(const fileops::Dir& root, const std::filesystem::path& path,
                                  std::chrono::milliseconds wait, fileops::FileLock* out);
}  // namespace store_detail

struct DiskStore::Impl {
  Impl(std::filesystem::path root, fileops::Dir root_dir, const StoreLimits& store_limits)
      : layout(std::move(root), std::move(root_dir)), limits(store_limits) {}

  store_detail::StoreLayout layout;
  StoreLimits limits;
  std::atomic<bool> tag_written{false};  // CACHEDIR.TAG: written by the first save, not at open
  fileops::ProcessLock app_presence;     // announce_app's lock on its own file, held for the store's life

  std::error_code begin_ledger(std::chrono::milliseconds wait,
                               std::optional<store_detail::SizeLedger>* ledger) const {
    return store_detail::SizeLedger::begin(layout, wait, !limits.read_only, ledger);
  }

  // Entry operations (disk_store.cpp).
  LoadResult load(const Digest128& key, bool whole_sidecar);
  SaveResult save(const Digest128& key, std::string_view binary, nlohmann::json sidecar);
  bool remove(const Digest128& key);
  void quarantine(const Digest128& key, const std::string& reason);

  // With the size lock held: move the entry's files to quarantine/ and account for it.
  // `damaged`: the files were changed outside the store (failed a check), so their sizes now may
  // differ from what was counted at commit; the totals are then recounted by the next holder.
  void quarantine_locked(store_detail::SizeLedger& ledger, const Digest128& key,
                         const std::string& reason, bool damaged);
  // With the size lock held and the record marked dirty: moves whatever is at the entry's names
  // (files, folders, FIFOs) to quarantine/ with a note of the reason.
  void move_to_quarantine(const Digest128& key, const std::string& reason,
                          const store_detail::EntryFootprint& present);
  // With the size lock held: unlink sidecar (uncommit) then binary. Returns what was removed.
  // With `expected`, only if the sidecar is still the one measured there.
  store_detail::EntryFootprint remove_locked(store_detail::SizeLedger& ledger,
                                             const store_detail::EntryPaths& paths,
                                             const store_detail::EntryFootprint* expected = nullptr);

  // Recorded inputs (disk_store_inputs.cpp).
  SaveResult save_inputs(std::string_view record, Digest128* digest);
  LoadResult load_inputs(const Digest128& digest);
  // Removes records no committed sidecar names (older than the stale-file age, or all of them
  // with `everything`), accounting for them. Skipped when a sidecar cannot be read.
  void sweep_input_records(bool everything, std::vector<VerifyProblem>* problems);

  // Maintenance (store_maintenance.cpp).
  SizeInfo size();
  SizeInfo rescan_size();
  std::vector<EntryInfo> list();
  void visit_summaries(const DiskStore::ShardVisitor& visit, const StoreProgress& progress);  // store_listing.cpp
  EvictionReport evict(std::uint64_t target_bytes, std::uint64_t older_than_s, const StoreProgress& progress);
  std::vector<VerifyProblem> verify(bool quarantine_bad, const StoreProgress& progress);
  EvictionReport clear(const StoreProgress& progress);

  // After a save: evicts when over max_size, or runs the periodic pass when it is due.
  std::uint64_t maintain_after_save(const SizeInfo& totals);
  bool maintenance_due() const;
  // The shards the next automatic pass scans: the fullest when `over` the size limit, else the
  // periodic pass's turn. Nullopt when the size records cannot be read.
  std::optional<store_detail::PassScope> pass_scope(bool over);
  // The eviction pass proper over `scope`'s shards (null: the whole store); the caller holds
  // evict.lock.
  EvictionReport evict_holding_lock(std::uint64_t target_bytes, std::uint64_t older_than_s,
                                    std::vector<VerifyProblem>* problems, const store_detail::PassScope* scope,
                                    const StoreProgress& progress = nullptr);
  // Removes stale temp files, old orphan binaries and expired quarantine files.
  void sweep_garbage(const store_detail::StoreScan& scan, std::vector<VerifyProblem>* problems);
  std::uint64_t eviction_target() const;
  double low_water_fraction() const;  // limits.low_water, or 0.8 when it is not in [0, 1]
};

}  // namespace jitcache
