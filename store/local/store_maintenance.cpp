// Whole-store operations: size, listing, eviction, sweeping, verify, clear.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

#include "hashing/bounded_json.hpp"
#include "store/files/file_ops.hpp"
#include "store/local/disk_store_impl.hpp"
#include "store/local/pass_scope.hpp"

namespace jitcache {

using store_detail::EntryCheck;
using store_detail::EntryFootprint;
using store_detail::ScannedEntry;
using store_detail::SizeLedger;
using store_detail::StoreScan;

namespace {

// Entries removed per size-lock hold: keeps writers from waiting behind a long eviction.
constexpr std::size_t kEvictionBatch = 64;
// Eviction passes one save may run while other writers keep the store over its limit.
constexpr int kMaxEvictionPasses = 4;

SizeInfo scan_totals(const store_detail::StoreLayout& layout) {
  return store_detail::totals_of(store_detail::scan_store(layout));
}

nlohmann::json read_sidecar(const store_detail::StoreLayout& layout, const store_detail::EntryPaths& paths) {
  std::string text;
  if (store_detail::read_entry_sidecar(layout, paths, &text)) return nullptr;
  auto parsed = parse_untrusted_json(text);
  return parsed.is_discarded() ? nlohmann::json(nullptr) : parsed;
}

// A quarantined file, or what was moved there in place of one (a FIFO, a symlink, a folder: an
// empty folder goes, a full one is left for a person to look at).
void remove_quarantined(const store_detail::StoreLayout& layout, const std::filesystem::path& path,
                        const fileops::FileInfo& info) {
  if (info.kind == fileops::FileKind::directory) {
    (void)layout.dir().remove_empty_dir(path);
  } else {
    (void)layout.dir().remove_file(path);
  }
}

// How verify names an entry: its entry file, or a format 1 entry's sidecar.
std::filesystem::path shown_entry(const store_detail::StoreLayout& layout, const ScannedEntry& entry) {
  const bool pair = entry.footprint.entry.kind == fileops::FileKind::missing &&
                    entry.footprint.sidecar.kind != fileops::FileKind::missing;
  return layout.shown(pair ? entry.paths.sidecar : entry.paths.entry);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API: forwards to Impl and turns every exception into an empty answer.

SizeInfo DiskStore::size() {
  try {
    return impl_->size();
  } catch (...) {
    return {};
  }
}

SizeInfo DiskStore::rescan_size() {
  try {
    return impl_->rescan_size();
  } catch (...) {
    return {};
  }
}

std::vector<EntryInfo> DiskStore::list() {
  try {
    return impl_->list();
  } catch (...) {
    return {};
  }
}

EvictionReport DiskStore::evict(std::uint64_t target_bytes, std::uint64_t older_than_s,
                                const StoreProgress& progress) {
  try {
    return impl_->evict(target_bytes, older_than_s, progress);
  } catch (...) {
    return {};
  }
}

std::vector<VerifyProblem> DiskStore::verify(bool quarantine_bad, const StoreProgress& progress) {
  try {
    return impl_->verify(quarantine_bad, progress);
  } catch (const std::exception& e) {
    return {{impl_->layout.root().string(), std::string("verify failed: ") + e.what()}};
  } catch (...) {
    return {{impl_->layout.root().string(), "verify failed: unknown error"}};
  }
}

EvictionReport DiskStore::clear(const StoreProgress& progress) {
  try {
    return impl_->clear(progress);
  } catch (...) {
    return {};
  }
}

// ---------------------------------------------------------------------------------------------

SizeInfo DiskStore::Impl::size() {
  std::optional<SizeLedger> ledger;
  if (begin_ledger(store_detail::kLongLockWait, &ledger)) return scan_totals(layout);
  return ledger->totals();
}

SizeInfo DiskStore::Impl::rescan_size() {
  std::optional<SizeLedger> ledger;
  if (begin_ledger(store_detail::kLongLockWait, &ledger)) return scan_totals(layout);
  if (!ledger->rescanned()) (void)ledger->rescan();
  return ledger->totals();
}

std::vector<EntryInfo> DiskStore::Impl::list() {
  const StoreScan scan = store_detail::scan_store(layout);
  std::vector<EntryInfo> entries;
  entries.reserve(scan.committed.size());
  for (const auto& found : scan.committed) {
    EntryInfo info;
    info.key = found.key;
    info.bytes = found.footprint.bytes;
    info.last_access_ns = found.footprint.commit_file().mtime_ns;
    info.sidecar = read_sidecar(layout, found.paths);
    entries.push_back(std::move(info));
  }
  std::sort(entries.begin(), entries.end(),
            [](const EntryInfo& a, const EntryInfo& b) { return a.key < b.key; });
  return entries;
}

double DiskStore::Impl::low_water_fraction() const {
  const double fraction = limits.low_water;
  return fraction >= 0.0 && fraction <= 1.0 ? fraction : 0.8;  // also catches NaN
}

std::uint64_t DiskStore::Impl::eviction_target() const {
  return static_cast<std::uint64_t>(std::floor(static_cast<double>(limits.max_size) * low_water_fraction()));
}

bool DiskStore::Impl::maintenance_due() const {
  fileops::FileInfo stamp;
  if (layout.dir().stat(layout.maintenance_stamp(), &stamp)) return false;
  if (stamp.kind == fileops::FileKind::missing) return true;
  // Mid-cycle (a big store: each pass covers a few shards) the next pass is due sooner.
  const std::int64_t interval = store_detail::read_pass_cursor(layout) == 0 ? store_detail::kMaintenanceIntervalNs
                                                                           : store_detail::kMaintenanceStepNs;
  return fileops::now_ns() - stamp.mtime_ns >= interval;
}

std::optional<store_detail::PassScope> DiskStore::Impl::pass_scope(bool over) {
  std::array<store_detail::ShardRecord, store_detail::kSlotCount> records;
  {
    std::optional<SizeLedger> ledger;
    if (begin_ledger(store_detail::kLongLockWait, &ledger) || ledger->shard_records(&records)) return std::nullopt;
  }
  // Part of a big shard: from a level-2 folder that changes from pass to pass, so that passes
  // spread over the shard rather than cleaning its first folders again and again.
  const int first_inner = static_cast<int>(static_cast<std::uint64_t>(fileops::now_ns()) / 1000 % store_detail::kShardCount);
  return over ? store_detail::fullest_shards(records, limits.pass_entries, first_inner)
              : store_detail::shards_from(records, store_detail::read_pass_cursor(layout), limits.pass_entries);
}

std::uint64_t DiskStore::Impl::maintain_after_save(const SizeInfo& totals) {
  auto over_size = [&](std::uint64_t bytes) { return limits.max_size > 0 && bytes > limits.max_size; };
  bool over = over_size(totals.bytes);
  std::uint64_t removed = 0;
  // A writer that saves while we evict skips the eviction (the lock below is taken without
  // waiting) and trusts us to count its bytes. Its save is committed before it tries the lock, so
  // looking at the size again after letting the lock go sees it. Bounded: at most this many
  // passes, each over a bounded number of shards (store/local/pass_scope.hpp).
  for (int pass = 0; pass < kMaxEvictionPasses && (over || maintenance_due()); ++pass) {
    {
      fileops::FileLock evicting;
      if (fileops::FileLock::acquire(layout.dir(), layout.evict_lock(), std::chrono::milliseconds(0), &evicting)) break;
      over = over_size(size().bytes);  // the holder we just followed may have done it all
      const bool due = maintenance_due();
      if (!over && !due) break;
      const std::optional<store_detail::PassScope> scope = pass_scope(over);
      if (!scope) break;
      const std::uint64_t target = over ? eviction_target() : std::numeric_limits<std::uint64_t>::max();
      removed += evict_holding_lock(target, limits.max_age_s, nullptr, &*scope).removed_entries;
      if (!over) store_detail::write_pass_stamp(layout, scope->next_cursor);
    }
    over = over_size(size().bytes);
    if (!over) break;
  }
  return removed;
}

EvictionReport DiskStore::Impl::evict(std::uint64_t target_bytes, std::uint64_t older_than_s,
                                      const StoreProgress& progress) {
  if (limits.read_only) return {};
  fileops::FileLock evicting;
  if (fileops::FileLock::acquire(layout.dir(), layout.evict_lock(), std::chrono::milliseconds(0), &evicting)) return {};
  return evict_holding_lock(target_bytes, older_than_s, nullptr, nullptr, progress);
}

EvictionReport DiskStore::Impl::evict_holding_lock(std::uint64_t target_bytes,
                                                   std::uint64_t older_than_s,
                                                   std::vector<VerifyProblem>* problems,
                                                   const store_detail::PassScope* scope,
                                                   const StoreProgress& progress) {
  EvictionReport report;
  const bool whole_store = scope == nullptr || scope->whole_store;
  StoreScan scan;
  if (scope == nullptr) {
    scan = store_detail::scan_store(layout, progress);
  } else {
    for (int slot : scope->slots) {
      if (scope->part_entries > 0) {
        store_detail::scan_shard_part(layout, slot, scope->first_inner, scope->part_entries, &scan);
      } else {
        store_detail::scan_shard(layout, slot, &scan);
      }
    }
  }
  sweep_garbage(scan, problems);
  if (whole_store) store_detail::write_pass_stamp(layout, 0);  // a full cycle's work: the periodic pass waits

  // Least recently used first: the entry file's mtime is refreshed by every hit.
  auto& candidates = scan.committed;
  std::sort(candidates.begin(), candidates.end(), [](const ScannedEntry& a, const ScannedEntry& b) {
    if (a.footprint.commit_file().mtime_ns != b.footprint.commit_file().mtime_ns) {
      return a.footprint.commit_file().mtime_ns < b.footprint.commit_file().mtime_ns;
    }
    return a.key < b.key;
  });
  const std::int64_t age_limit_ns =
      older_than_s > 0 ? static_cast<std::int64_t>(std::min<std::uint64_t>(older_than_s, 1ull << 32)) *
                             store_detail::kSecondNs
                       : 0;
  const std::int64_t cutoff_ns =
      older_than_s > 0 ? fileops::now_ns() - age_limit_ns : std::numeric_limits<std::int64_t>::min();

  // A pass over a few shards of a big store cleans them down to the low-water mark of their own
  // bytes, as ccache cleans one folder at a time: never every entry it looked at (the recently
  // used ones among them), whatever the store's total still is; the next pass takes other shards.
  std::uint64_t size_budget = std::numeric_limits<std::uint64_t>::max();
  if (!whole_store) {
    std::uint64_t scanned = 0;
    for (const ScannedEntry& candidate : candidates) scanned += candidate.footprint.bytes;
    size_budget = scanned - static_cast<std::uint64_t>(static_cast<double>(scanned) * low_water_fraction());
  }

  std::size_t next = 0;
  bool done = false;
  while (!done && next < candidates.size()) {
    std::optional<SizeLedger> ledger;
    if (begin_ledger(store_detail::kLongLockWait, &ledger)) break;
    for (std::size_t in_batch = 0; in_batch < kEvictionBatch && next < candidates.size(); ++in_batch) {
      const ScannedEntry& candidate = candidates[next];
      const bool too_old = candidate.footprint.commit_file().mtime_ns < cutoff_ns;
      if (!too_old && (ledger->totals().bytes <= target_bytes || report.removed_bytes >= size_budget)) {
        done = true;  // sorted by age: nothing after this one is too old either
        break;
      }
      ++next;
      // An entry hit (touched) or replaced since the scan is no longer the least recently used
      // one: remove_locked leaves it.
      const EntryFootprint removed = remove_locked(*ledger, candidate.paths, &candidate.footprint);
      if (removed.committed) {
        report.removed_entries += 1;
        report.removed_bytes += removed.bytes;
      }
    }
    (void)ledger->finish();
    if (progress) progress("evicting", next, candidates.size());
  }
  // The records only evicted entries named; finding them needs every sidecar: only when the pass
  // looked at the whole store (a small store, or `jitcache evict`).
  if (whole_store) sweep_input_records(/*everything=*/false, problems);
  return report;
}

void DiskStore::Impl::sweep_garbage(const StoreScan& scan, std::vector<VerifyProblem>* problems) {
  const std::int64_t now = fileops::now_ns();
  const bool may_remove = !limits.read_only;
  const char* removed_note = may_remove ? " (removed)" : " (read-only store: left in place)";
  auto note = [&](const std::filesystem::path& path, const std::string& problem) {
    if (problems != nullptr) problems->push_back({path.string(), problem + removed_note});
  };

  // Temp files of writers that died: a live writer renames its temp files within moments.
  std::vector<fileops::DirEntry> names;
  if (!layout.dir().list(layout.tmp_dir(), &names)) {
    for (const auto& name : names) {
      const auto path = layout.tmp_dir() / name.name;
      fileops::FileInfo info;
      if (layout.dir().stat(path, &info) || info.kind != fileops::FileKind::regular) continue;
      if (now - info.mtime_ns < store_detail::kStaleAfterNs) continue;
      if (may_remove) (void)layout.dir().remove_file(path);
      note(layout.shown(path), "stale temp file");
    }
  }

  // Binaries without a sidecar: a writer died between the two renames, or a remove was cut
  // short. Checked again under the size lock, which every committing writer holds.
  std::vector<const ScannedEntry*> old_orphans;
  for (const auto& orphan : scan.orphan_binaries) {
    if (now - orphan.footprint.binary.mtime_ns >= store_detail::kStaleAfterNs) {
      old_orphans.push_back(&orphan);
    }
  }
  if (!old_orphans.empty()) {
    std::optional<SizeLedger> ledger;
    if (may_remove && !begin_ledger(store_detail::kLongLockWait, &ledger)) {
      for (const ScannedEntry* orphan : old_orphans) {
        EntryFootprint now_there;
        if (store_detail::measure_entry(layout, orphan->paths, &now_there) || now_there.committed) continue;
        (void)layout.dir().remove_file(orphan->paths.binary);
        note(layout.shown(orphan->paths.binary), "orphan binary without sidecar");
      }
    } else if (!may_remove) {
      for (const ScannedEntry* orphan : old_orphans) {
        note(layout.shown(orphan->paths.binary), "orphan binary without sidecar");
      }
    }
  }

  // Build locks whose holder died (a live holder removes its lock file when it releases it).
  // Removed only while locked here, so no live builder is ever cut off.
  if (may_remove && !layout.dir().list(layout.locks_dir(), &names)) {
    for (const auto& name : names) {
      const auto path = layout.locks_dir() / name.name;
      fileops::FileInfo info;
      if (layout.dir().stat(path, &info) || info.kind != fileops::FileKind::regular) continue;
      if (now - info.mtime_ns < store_detail::kStaleAfterNs) continue;
      fileops::FileLock abandoned;
      if (store_detail::lock_current_file(layout.dir(), path, std::chrono::milliseconds(0), &abandoned)) continue;
      (void)layout.dir().remove_file(path);
      note(layout.shown(path), "abandoned build lock");
    }
  }

  // Quarantined entries are evidence for a while, not forever.
  if (may_remove && !layout.dir().list(layout.quarantine_dir(), &names)) {
    for (const auto& name : names) {
      const auto path = layout.quarantine_dir() / name.name;
      fileops::FileInfo info;
      if (layout.dir().stat(path, &info) || info.kind == fileops::FileKind::missing) continue;
      if (now - info.mtime_ns < store_detail::kQuarantineKeepNs) continue;
      remove_quarantined(layout, path, info);
    }
  }
}

std::vector<VerifyProblem> DiskStore::Impl::verify(bool quarantine_bad, const StoreProgress& progress) {
  std::vector<VerifyProblem> problems;
  const StoreScan scan = store_detail::scan_store(layout, progress);
  for (const auto& error : scan.errors) {
    problems.push_back({error.path.string(), "cannot read: " + error.message});
  }
  for (const auto& folder : scan.untrusted) problems.push_back({folder.path.string(), folder.message});
  for (const auto& path : scan.unexpected) {
    problems.push_back({path.string(), "unexpected file in the entry folders"});
  }

  std::vector<std::pair<const ScannedEntry*, std::string>> bad;
  for (const auto& entry : scan.not_files) {
    const auto& footprint = entry.footprint;
    const char* odd = !store_detail::is_file_or_missing(footprint.entry)     ? "entry file"
                      : !store_detail::is_file_or_missing(footprint.sidecar) ? "sidecar"
                                                                             : "binary";
    bad.emplace_back(&entry, std::string(odd) + " is not a regular file (a folder, FIFO or link in its place)");
  }
  for (std::size_t i = 0; i < scan.committed.size(); ++i) {
    const ScannedEntry& entry = scan.committed[i];
    if (progress) progress("checking", i + 1, scan.committed.size());
    const EntryCheck check = store_detail::check_entry(layout, entry.paths);
    if (check.state == EntryCheck::State::io_error) {
      problems.push_back({shown_entry(layout, entry).string(), check.reason});
    } else if (check.state == EntryCheck::State::bad) {
      bad.emplace_back(&entry, check.reason);
    }
  }
  std::optional<SizeLedger> ledger;
  if (!bad.empty() && quarantine_bad && !limits.read_only) {
    (void)begin_ledger(store_detail::kLongLockWait, &ledger);
  }
  for (const auto& [entry, reason] : bad) {
    if (!ledger) {
      problems.push_back({shown_entry(layout, *entry).string(), reason});
      continue;
    }
    // Looked at again under the lock: a writer may have replaced it since the first look.
    std::string why = reason;
    if (entry->footprint.committed) {
      const EntryCheck check = store_detail::check_entry(layout, entry->paths);
      if (check.state != EntryCheck::State::bad) continue;
      why = check.reason;
    }
    quarantine_locked(*ledger, entry->key, why, /*damaged=*/true);
    EntryFootprint left;
    const bool moved = !store_detail::measure_entry(layout, entry->paths, &left) && !left.has_any();
    problems.push_back({shown_entry(layout, *entry).string(),
                        why + (moved ? " (quarantined)" : " (could not be moved: remove it by hand)")});
  }
  ledger.reset();

  if (!limits.read_only) {
    fileops::FileLock evicting;  // the sweep is the evictor's job: do not race one
    if (!fileops::FileLock::acquire(layout.dir(), layout.evict_lock(), store_detail::kLongLockWait, &evicting)) {
      sweep_garbage(scan, &problems);
      sweep_input_records(/*everything=*/false, &problems);
    }
  } else {
    sweep_garbage(scan, &problems);
  }

  // The size record must agree with the files; compared under the lock so no commit is halfway.
  if (!begin_ledger(store_detail::kLongLockWait, &ledger) && !ledger->rescanned()) {
    const StoreScan now = store_detail::scan_store(layout);
    auto differs = [&](const std::filesystem::path& record, const SizeInfo& recorded, const SizeInfo& actual) {
      if (recorded.bytes == actual.bytes && recorded.entries == actual.entries) return false;
      problems.push_back({layout.shown(record).string(),
                          "says " + std::to_string(recorded.bytes) + " bytes in " + std::to_string(recorded.entries) +
                              " entries, files hold " + std::to_string(actual.bytes) + " bytes in " +
                              std::to_string(actual.entries) + (limits.read_only ? "" : " (rewritten)")});
      return true;
    };
    bool wrong = differs(layout.size_record(), ledger->totals(), store_detail::totals_of(now));
    // The shard records too (in read-only mode they are counted, so they agree).
    std::array<store_detail::ShardRecord, store_detail::kSlotCount> slots;
    if (!ledger->shard_records(&slots)) {
      const auto actual = store_detail::totals_by_slot(now);
      for (int slot = 0; slot < store_detail::kSlotCount; ++slot) {
        const auto index = static_cast<std::size_t>(slot);
        wrong = differs(layout.shard_record(slot), slots[index].totals, actual[index]) || wrong;
      }
    }
    if (wrong) (void)ledger->rescan();
  }
  return problems;
}

EvictionReport DiskStore::Impl::clear(const StoreProgress& progress) {
  EvictionReport report;
  if (limits.read_only) return report;
  fileops::FileLock evicting;
  (void)fileops::FileLock::acquire(layout.dir(), layout.evict_lock(), store_detail::kLongLockWait, &evicting);
  std::optional<SizeLedger> ledger;
  if (begin_ledger(store_detail::kLongLockWait, &ledger)) return report;

  const StoreScan scan = store_detail::scan_store(layout, progress);
  // Renamed within their parent, which is ours: moving them elsewhere would need write access to
  // them (their `..`), which another user's folder does not give.
  const std::string foreign_suffix = ".foreign-" + std::to_string(std::time(nullptr));
  for (const std::filesystem::path& foreign : scan.foreign_dirs) {
    std::filesystem::path aside = foreign;
    aside += foreign_suffix;
    if (!layout.dir().rename(foreign, aside)) report.moved_aside.push_back(layout.shown(aside).string());
  }
  for (std::size_t i = 0; i < scan.committed.size(); ++i) {
    if (progress) progress("removing", i + 1, scan.committed.size());
    const EntryFootprint removed = remove_locked(*ledger, scan.committed[i].paths);
    if (removed.committed) {
      report.removed_entries += 1;
      report.removed_bytes += removed.bytes;
    }
  }
  for (const auto& orphan : scan.orphan_binaries) (void)remove_locked(*ledger, orphan.paths);
  // Folders, FIFOs or links at entry names: out of the way (then emptied out of quarantine below).
  for (const auto& odd : scan.not_files) {
    if (ledger->mark_dirty(store_detail::shard_slot(odd.key))) continue;
    move_to_quarantine(odd.key, "removed by clear", odd.footprint);
  }

  std::vector<fileops::DirEntry> names;
  if (!layout.dir().list(layout.quarantine_dir(), &names)) {
    for (const auto& name : names) {
      const auto path = layout.quarantine_dir() / name.name;
      fileops::FileInfo info;
      if (!layout.dir().stat(path, &info)) remove_quarantined(layout, path, info);
    }
  }
  // Empty shard folders go too; saves create them under the size lock, which we hold.
  std::vector<fileops::DirEntry> outer;
  if (!layout.dir().list("", &outer)) {
    for (const auto& first : outer) {
      if (!store_detail::is_shard_name(first.name)) continue;
      const std::filesystem::path outer_dir = first.name;
      std::vector<fileops::DirEntry> inner;
      if (layout.dir().list(outer_dir, &inner)) continue;
      for (const auto& second : inner) {
        if (store_detail::is_shard_name(second.name)) (void)layout.dir().remove_empty_dir(outer_dir / second.name);
      }
      (void)layout.dir().remove_empty_dir(outer_dir);
    }
  }
  (void)ledger->finish();
  ledger.reset();
  sweep_input_records(/*everything=*/true, nullptr);
  return report;
}

}  // namespace jitcache
