// Opening the store and the per-entry operations: load, save, remove, quarantine.
// The public methods only catch: nothing may escape into the application.
#include "store/local/disk_store.hpp"

#include "store/files/file_ops.hpp"
#include "store/files/root_check.hpp"
#include "store/local/disk_store_impl.hpp"
#include "store/local/entry_file.hpp"

namespace jitcache {

using store_detail::EntryCheck;
using store_detail::EntryFootprint;
using store_detail::EntryPaths;
using store_detail::SizeLedger;
using store_detail::write_temp_file;

namespace {

// Opens the root, creating it 0700 when missing (never in read-only mode: a store that does not
// exist yet is an empty one). Refuses a root anyone but this user could change, since they could
// plant binaries we would hand to the driver; root's own read-only shared cache is accepted in
// read-only mode (docs/reliability.md, "Trust model").
// `dir` may come already open and checked (open_trusted_root, by the caller that read the config
// file from it): it is used as it is, not checked a second time.
bool open_root(const std::filesystem::path& root, bool read_only, bool create, fileops::Dir* dir,
               bool* missing, std::string* error) {
  *missing = false;
  RootCheck state = dir->is_open() ? RootCheck::accepted : open_trusted_root(root, dir, error);
  if (state == RootCheck::missing) {
    if (read_only) {
      *missing = true;
      return true;
    }
    if (!create) {
      *error = "cache directory " + root.string() + " is gone";
      return false;
    }
    if (auto failure = fileops::make_private_dirs(root)) {
      *error = "cannot create cache directory " + root.string() + ": " + failure.message();
      return false;
    }
    state = open_trusted_root(root, dir, error);
    if (state == RootCheck::missing) *error = "cache directory " + root.string() + " vanished while created";
  }
  if (state != RootCheck::accepted) return false;
  fileops::FileInfo info;
  if (auto failure = dir->info(&info)) {
    *error = "cannot inspect cache directory " + root.string() + ": " + failure.message();
    return false;
  }
  if (!read_only && info.owner != fileops::current_user()) {
    *error = "cache directory " + root.string() + " belongs to root: a shared cache can only be used "
             "read-only (set JITCACHE_READ_ONLY=1, or point JITCACHE_DIR at a cache of your own)";
    return false;
  }
  return true;
}

// Marks the root for backup tools, as ccache does, and names the store format entries are
// written in (docs/store-format.md). Best effort: both exist already after the first save.
void write_root_marks(const store_detail::StoreLayout& layout) {
  fileops::File file;
  if (!fileops::File::create_exclusive(layout.dir(), "CACHEDIR.TAG", &file)) {
    (void)file.write_all(
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by jitcache.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n");
  }
  fileops::File format;
  if (!fileops::File::create_exclusive(layout.dir(), layout.format_mark(), &format)) {
    (void)format.write_all(store_detail::kFormatMarkText);
  }
}

LoadResult load_failure(LoadStatus status, std::string reason) {
  LoadResult result;
  result.status = status;
  result.reason = std::move(reason);
  return result;
}

SaveResult save_result(SaveStatus status, std::string reason) {
  SaveResult result;
  result.status = status;
  result.reason = std::move(reason);
  return result;
}

}  // namespace

// Makes tmp/ when it is missing (the store's open makes none; someone may also have removed it),
// never the root: a root that vanished, an unmounted disk say, must not reappear on another file
// system.
std::error_code store_detail::write_temp_file(const StoreLayout& layout, std::string_view data,
                                             std::string_view suffix, fileops::AtomicFile* file) {
  std::error_code error;
  for (int attempt = 0; attempt < 3; ++attempt) {
    error = file->write(layout.new_temp_file(suffix), data);
    if (error == std::errc::no_such_file_or_directory) {
      if (auto mkdir_error = layout.dir().make_dir(layout.tmp_dir())) return mkdir_error;
      continue;
    }
    if (error != std::errc::file_exists) return error;
  }
  return error;
}

// ---------------------------------------------------------------------------------------------
// Public API: forwards to Impl and turns every exception into a status.

std::unique_ptr<DiskStore> DiskStore::open(const std::filesystem::path& root, const StoreLimits& limits,
                                           std::string* error, fileops::Dir* checked_root) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  try {
    error->clear();
    if (root.empty()) {
      *error = "cache directory path is empty";
      return nullptr;
    }
    fileops::Dir dir;
    if (checked_root != nullptr) dir = std::move(*checked_root);
    bool missing = false;
    if (!open_root(root, limits.read_only, limits.create_root, &dir, &missing, error)) return nullptr;
    if (missing) {
      // Read-only and nothing there yet: an empty store whose every lookup misses.
      StoreLimits empty = limits;
      return std::unique_ptr<DiskStore>(new DiskStore(std::make_unique<Impl>(root, fileops::Dir(), empty)));
    }
    // Nothing else at open: a process that only hits never needs tmp/, CACHEDIR.TAG or the size
    // record, and must not wait for size.lock (an eviction pass holds it for seconds) or rebuild
    // a damaged record (a scan of the whole store) before its first lookup. The first save makes
    // tmp/ and the tag; whoever next takes the size lock repairs the record.
    return std::unique_ptr<DiskStore>(new DiskStore(std::make_unique<Impl>(root, std::move(dir), limits)));
  } catch (const std::exception& e) {
    *error = std::string("cannot open cache directory: ") + e.what();
  } catch (...) {
    *error = "cannot open cache directory: unknown error";
  }
  return nullptr;
}

DiskStore::DiskStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DiskStore::~DiskStore() = default;

const std::filesystem::path& DiskStore::root() const { return impl_->layout.root(); }
const StoreLimits& DiskStore::limits() const { return impl_->limits; }

LoadResult DiskStore::load(const Digest128& key, bool whole_sidecar) {
  try {
    return impl_->load(key, whole_sidecar);
  } catch (const std::exception& e) {
    return load_failure(LoadStatus::error, std::string("load failed: ") + e.what());
  } catch (...) {
    return load_failure(LoadStatus::error, "load failed: unknown error");
  }
}

SaveResult DiskStore::save(const Digest128& key, std::string_view binary, nlohmann::json sidecar) {
  try {
    return impl_->save(key, binary, std::move(sidecar));
  } catch (const std::exception& e) {
    return save_result(SaveStatus::error, std::string("save failed: ") + e.what());
  } catch (...) {
    return save_result(SaveStatus::error, "save failed: unknown error");
  }
}

bool DiskStore::contains(const Digest128& key) {
  try {
    store_detail::EntryFootprint footprint;
    return impl_->layout.dir().is_open() &&
           !store_detail::measure_entry(impl_->layout, impl_->layout.entry(key), &footprint) && footprint.committed;
  } catch (...) {
    return false;
  }
}

bool DiskStore::remove(const Digest128& key) {
  try {
    return impl_->remove(key);
  } catch (...) {
    return false;
  }
}

void DiskStore::quarantine(const Digest128& key, const std::string& reason) {
  try {
    impl_->quarantine(key, reason);
  } catch (...) {
  }
}

// ---------------------------------------------------------------------------------------------
// Entry operations.

LoadResult DiskStore::Impl::load(const Digest128& key, bool whole_sidecar) {
  // Read-only and the root did not exist when the store opened: an empty store.
  if (!layout.dir().is_open()) return load_failure(LoadStatus::miss, "");
  const EntryPaths paths = layout.entry(key);
  EntryCheck check = store_detail::check_entry(layout, paths, whole_sidecar);
  std::optional<SizeLedger> ledger;

  if (check.state == EntryCheck::State::bad) {
    if (limits.read_only) {
      return load_failure(LoadStatus::corrupt, check.reason + " (read-only store: left in place)");
    }
    // A writer may be replacing this key right now (new binary renamed, new sidecar not yet).
    // Writers rename under the size lock, so looking again while holding it tells a torn
    // replacement from real damage.
    if (auto error = begin_ledger(store_detail::kShortLockWait, &ledger)) {
      return load_failure(LoadStatus::corrupt, check.reason + " (store busy: not quarantined)");
    }
    check = store_detail::check_entry(layout, paths, whole_sidecar);
  }

  switch (check.state) {
    case EntryCheck::State::missing:
      return load_failure(LoadStatus::miss, "");
    case EntryCheck::State::io_error:
      return load_failure(LoadStatus::error, check.reason);
    case EntryCheck::State::bad:
      quarantine_locked(*ledger, key, check.reason, /*damaged=*/true);
      return load_failure(LoadStatus::corrupt, check.reason);
    case EntryCheck::State::ok:
      break;
  }
  // The LRU clock: a hit makes the sidecar young. Read-only stores leave the disk untouched.
  if (!limits.read_only) (void)check.commit_file.touch_now();
  LoadResult result;
  result.status = LoadStatus::hit;
  result.binary = std::move(check.binary);
  result.sidecar = std::move(check.sidecar);
  result.answers = std::move(check.answers);
  return result;
}

SaveResult DiskStore::Impl::save(const Digest128& key, std::string_view binary, nlohmann::json sidecar) {
  if (limits.read_only) return save_result(SaveStatus::skipped, "store is read-only");
  if (binary.size() < limits.min_entry_size || binary.size() > limits.max_entry_size) {
    return save_result(SaveStatus::skipped,
                       "binary size " + std::to_string(binary.size()) + " outside [" +
                           std::to_string(limits.min_entry_size) + ", " +
                           std::to_string(limits.max_entry_size) + "]");
  }
  if (sidecar.is_null()) sidecar = nlohmann::json::object();
  if (!sidecar.is_object()) return save_result(SaveStatus::error, "sidecar must be a JSON object");
  store_detail::add_integrity_fields(&sidecar, key.hex(), binary);
  const std::string sidecar_bytes = store_detail::sidecar_text(sidecar);

  if (!tag_written.exchange(true)) write_root_marks(layout);  // once per process, at the first save
  // The slow part, writing the bytes, happens before taking the lock.
  fileops::AtomicFile entry_file(layout.dir());  // its temporary goes unless committed
  if (auto error = write_temp_file(layout, store_detail::encode_entry(key, sidecar_bytes, binary), ".entry.tmp",
                                   &entry_file)) {
    return save_result(SaveStatus::error, "cannot write temp entry file: " + error.message());
  }

  std::optional<SizeLedger> ledger;
  if (auto error = begin_ledger(store_detail::kLongLockWait, &ledger)) {
    return save_result(SaveStatus::error, "cannot take the size lock: " + error.message());
  }
  const EntryPaths paths = layout.entry(key);
  const int slot = store_detail::shard_slot(key);
  // Folders are made under the lock so that clear() can remove empty ones without racing us.
  // One level at a time below the root: a shard folder that is a symlink, another user's or
  // writable by others is refused.
  std::error_code folder_error = layout.dir().make_dir(paths.outer_dir);
  if (!folder_error) folder_error = layout.dir().make_dir(paths.inner_dir);
  if (auto error = folder_error) {
    return save_result(SaveStatus::error, "cannot create entry folder " + layout.shown(paths.inner_dir).string() +
                                              ": " + error.message());
  }
  EntryFootprint before;
  if (auto error = store_detail::measure_entry(layout, paths, &before)) {
    return save_result(SaveStatus::error, "cannot inspect existing entry: " + error.message());
  }
  // A folder, FIFO or symlink at an entry name would fail the rename below on every save of
  // this key: move it to quarantine/ first.
  if (!before.all_files_or_missing()) {
    if (!ledger->mark_dirty(slot)) {
      move_to_quarantine(key, "not a regular file at the entry's name", before);
      ledger->invalidate(slot);
    }
    if (auto error = store_detail::measure_entry(layout, paths, &before)) {
        return save_result(SaveStatus::error, "cannot inspect existing entry: " + error.message());
    }
  }
  if (auto error = ledger->mark_dirty(slot)) {
    return save_result(SaveStatus::error, "cannot update the size record: " + error.message());
  }

  // One rename commits the entry, replacing an older one whole. A format 1 pair of the key goes
  // after it (sidecar first, so it is never half there); a crash between leaves it unused: the
  // entry file is read first.
  std::string failure;
  if (auto error = entry_file.commit(paths.entry)) {
    failure = "cannot move entry file into place: " + error.message();
  } else {
    if (before.sidecar.kind == fileops::FileKind::regular) (void)layout.dir().remove_file(paths.sidecar);
    if (before.binary.kind == fileops::FileKind::regular) (void)layout.dir().remove_file(paths.binary);
  }
  EntryFootprint after;
  if (store_detail::measure_entry(layout, paths, &after)) {
    // Cannot tell what changed: leave the record dirty so that the next holder rescans.
    return save_result(failure.empty() ? SaveStatus::stored : SaveStatus::error,
                       failure.empty() ? "" : failure);
  }
  ledger->apply(slot, before, after);
  (void)ledger->finish();
  const SizeInfo totals = ledger->totals();
  ledger.reset();  // release the lock before any eviction
  if (!failure.empty()) return save_result(SaveStatus::error, failure);

  SaveResult result = save_result(SaveStatus::stored, "");
  result.evicted_entries = maintain_after_save(totals);
  return result;
}

EntryFootprint DiskStore::Impl::remove_locked(SizeLedger& ledger, const EntryPaths& paths,
                                             const EntryFootprint* expected) {
  EntryFootprint before, after;
  if (store_detail::measure_entry(layout, paths, &before)) return {};
  if (!before.committed && before.binary.kind != fileops::FileKind::regular) return {};
  // Hit (touched) or replaced since the caller looked: not the entry it meant to remove.
  if (expected && (!before.committed || before.commit_file().identity != expected->commit_file().identity ||
                   before.commit_file().mtime_ns != expected->commit_file().mtime_ns)) {
    return {};
  }
  const int slot = store_detail::shard_slot(paths.key_hex);
  if (ledger.mark_dirty(slot)) return {};
  // Format 1's commit marker first (a pair is never half served), then the entry file: readers
  // now see a miss.
  if (before.sidecar.kind == fileops::FileKind::regular) (void)layout.dir().remove_file(paths.sidecar);
  if (before.entry.kind == fileops::FileKind::regular) (void)layout.dir().remove_file(paths.entry);
  if (before.binary.kind == fileops::FileKind::regular) (void)layout.dir().remove_file(paths.binary);
  if (store_detail::measure_entry(layout, paths, &after)) return {};  // record stays dirty: rescan later
  ledger.apply(slot, before, after);
  EntryFootprint removed;
  removed.committed = before.committed && !after.committed;
  removed.bytes = before.bytes - after.bytes;
  return removed;
}

bool DiskStore::Impl::remove(const Digest128& key) {
  if (limits.read_only) return false;
  std::optional<SizeLedger> ledger;
  if (begin_ledger(store_detail::kShortLockWait, &ledger)) return false;
  const EntryFootprint removed = remove_locked(*ledger, layout.entry(key));
  (void)ledger->finish();
  return removed.committed;
}

void DiskStore::Impl::quarantine(const Digest128& key, const std::string& reason) {
  if (limits.read_only) return;
  std::optional<SizeLedger> ledger;
  if (begin_ledger(store_detail::kShortLockWait, &ledger)) return;
  quarantine_locked(*ledger, key, reason, /*damaged=*/false);
}

void DiskStore::Impl::move_to_quarantine(const Digest128& key, const std::string& reason,
                                         const EntryFootprint& present) {
  const EntryPaths paths = layout.entry(key);
  const std::int64_t when = fileops::now_ns();
  const bool can_keep = !layout.dir().make_dir(layout.quarantine_dir());
  // Commit markers first (uncommit). If one cannot be kept for inspection it is still taken out of use.
  // Whatever is there moves, a folder or a FIFO too: left in place it would block the key.
  auto move_out = [&](const std::filesystem::path& from, const char* extension) {
    if (!can_keep || layout.dir().rename(from, layout.quarantine_file(key, when, extension))) {
      (void)layout.dir().remove_file(from);
    }
  };
  if (present.sidecar.kind != fileops::FileKind::missing) move_out(paths.sidecar, "json");
  if (present.entry.kind != fileops::FileKind::missing) move_out(paths.entry, "entry");
  if (present.binary.kind != fileops::FileKind::missing) move_out(paths.binary, "bin");
  if (can_keep) {
    fileops::File note;
    if (!fileops::File::create_exclusive(layout.dir(), layout.quarantine_file(key, when, "reason"), &note)) {
      (void)note.write_all(reason + "\n");
    }
  }
}

void DiskStore::Impl::quarantine_locked(SizeLedger& ledger, const Digest128& key,
                                        const std::string& reason, bool damaged) {
  const EntryPaths paths = layout.entry(key);
  EntryFootprint before, after;
  if (store_detail::measure_entry(layout, paths, &before)) return;
  if (!before.has_any()) return;
  const int slot = store_detail::shard_slot(key);
  if (ledger.mark_dirty(slot)) return;
  move_to_quarantine(key, reason, before);
  if (damaged || store_detail::measure_entry(layout, paths, &after)) {
    ledger.invalidate(slot);
    return;
  }
  ledger.apply(slot, before, after);
  (void)ledger.finish();
}

}  // namespace jitcache
