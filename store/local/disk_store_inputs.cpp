// DiskStore's recorded inputs: saved, loaded and swept like entries (their layout: store/local/store_layout.hpp).
#include <set>

#include "hashing/bounded_json.hpp"
#include "hashing/recorded_inputs.hpp"
#include "store/local/disk_store_impl.hpp"
#include "store/local/entry_check.hpp"
#include "store/local/store_layout.hpp"

namespace jitcache {

using store_detail::EntryFootprint;
using store_detail::SizeLedger;

namespace {

// What a record of `bytes` bytes adds to (or takes from) the size record: bytes, no entry.
EntryFootprint record_footprint(std::uint64_t bytes) {
  EntryFootprint footprint;
  footprint.bytes = bytes;
  return footprint;
}

// The record a committed sidecar names, if any; false when the sidecar could not be read.
bool named_record(const store_detail::StoreLayout& layout, const store_detail::EntryPaths& paths,
                  std::set<Digest128>* named) {
  std::string text;
  const std::error_code error = store_detail::read_entry_sidecar(layout, paths, &text);
  if (error == std::errc::no_such_file_or_directory) return true;  // removed meanwhile
  if (error == std::errc::illegal_byte_sequence) return true;      // a damaged entry names nothing usable
  if (error) return false;
  nlohmann::json sidecar = parse_untrusted_json(text);
  if (sidecar.is_discarded() || !sidecar.is_object()) return true;  // a bad entry names nothing usable
  auto it = sidecar.find("inputs");
  if (it != sidecar.end() && it->is_string()) {
    if (auto digest = Digest128::from_hex(it->get_ref<const std::string&>())) named->insert(*digest);
  }
  return true;
}

}  // namespace

SaveResult DiskStore::save_inputs(std::string_view record, Digest128* digest) {
  try {
    return impl_->save_inputs(record, digest);
  } catch (const std::exception& e) {
    SaveResult result;
    result.reason = std::string("inputs not saved: ") + e.what();
    return result;
  }
}

LoadResult DiskStore::load_inputs(const Digest128& digest) {
  try {
    return impl_->load_inputs(digest);
  } catch (const std::exception& e) {
    LoadResult result;
    result.status = LoadStatus::error;
    result.reason = std::string("inputs not read: ") + e.what();
    return result;
  }
}

SaveResult DiskStore::Impl::save_inputs(std::string_view record, Digest128* digest) {
  SaveResult result;
  *digest = xxh3_128(record);
  if (limits.read_only) return result.status = SaveStatus::skipped, result.reason = "store is read-only", result;
  if (record.size() > kMaxRecordedInputsBytes) {
    return result.status = SaveStatus::skipped, result.reason = "inputs record larger than its cap", result;
  }
  const std::filesystem::path path = store_detail::input_record_path(*digest);
  fileops::AtomicFile record_file(layout.dir());  // its temporary goes unless committed
  if (auto error = store_detail::write_temp_file(layout, record, ".rec.tmp", &record_file)) {
    return result.reason = "cannot write temp inputs record: " + error.message(), result;
  }
  std::optional<SizeLedger> ledger;
  if (auto error = begin_ledger(store_detail::kLongLockWait, &ledger)) {
    return result.reason = "cannot take the size lock: " + error.message(), result;
  }
  std::error_code error = layout.dir().make_dir(store_detail::inputs_dir());
  if (!error) error = layout.dir().make_dir(path.parent_path());
  fileops::FileInfo before;
  if (!error) error = layout.dir().stat(path, &before);
  if (!error && before.kind == fileops::FileKind::regular && before.size == record.size()) {
    // Deduplicated: the same program again (another device, another driver version). Young again,
    // under the size lock the sweep holds too, so that the sweep keeps it for the entry naming it.
    (void)layout.dir().set_mtime(path, fileops::now_ns());
    result.status = SaveStatus::stored;
    return result;
  }
  if (!error && before.kind != fileops::FileKind::regular && before.kind != fileops::FileKind::missing) {
    error = std::make_error_code(std::errc::file_exists);  // a folder or FIFO squats the name
  }
  if (!error) error = ledger->mark_dirty(store_detail::kInputsSlot);
  if (!error) error = record_file.commit(path);
  if (error) {
    return result.reason = "cannot store inputs record: " + error.message(), result;
  }
  const std::uint64_t old_bytes = before.kind == fileops::FileKind::regular ? before.size : 0;
  ledger->apply(store_detail::kInputsSlot, record_footprint(old_bytes), record_footprint(record.size()));
  (void)ledger->finish();
  result.status = SaveStatus::stored;
  return result;
}

LoadResult DiskStore::Impl::load_inputs(const Digest128& digest) {
  LoadResult result;
  if (!layout.dir().is_open()) return result;
  const std::filesystem::path path = store_detail::input_record_path(digest);
  fileops::File file;
  std::error_code error = fileops::File::open_read(layout.dir(), path, &file, kMaxRecordedInputsBytes);
  if (!error) error = file.read_all(&result.binary, kMaxRecordedInputsBytes);
  if (error == std::errc::no_such_file_or_directory) return result;
  if (error) {
    result.status = LoadStatus::error;
    result.reason = "inputs record " + layout.shown(path).string() + ": " + error.message();
    return result;
  }
  if (xxh3_128(result.binary) != digest) {
    result.binary.clear();
    result.status = LoadStatus::corrupt;
    result.reason = "inputs record " + layout.shown(path).string() + " does not match its name";
    return result;  // left for the sweep: no sidecar names a record by a digest it does not have
  }
  result.status = LoadStatus::hit;
  return result;
}

void DiskStore::Impl::sweep_input_records(bool everything, std::vector<VerifyProblem>* problems) {
  if (limits.read_only) return;
  std::vector<store_detail::InputRecordFile> records = store_detail::scan_input_records(layout);
  if (records.empty()) return;
  std::set<Digest128> named;
  if (!everything) {
    const store_detail::StoreScan scan = store_detail::scan_store(layout);
    if (!scan.errors.empty()) return;  // cannot tell what is named: keep everything
    for (const auto& entry : scan.committed) {
      if (!named_record(layout, entry.paths, &named)) return;
    }
  }
  const std::int64_t now = fileops::now_ns();
  std::optional<SizeLedger> ledger;
  if (begin_ledger(store_detail::kLongLockWait, &ledger)) return;
  for (const auto& record : records) {
    if (!everything && (named.count(record.digest) || now - record.info.mtime_ns < store_detail::kStaleAfterNs)) continue;
    fileops::FileInfo present;
    if (layout.dir().stat(record.path, &present) || present.kind != fileops::FileKind::regular) continue;
    if (!everything && now - present.mtime_ns < store_detail::kStaleAfterNs) continue;  // saved again meanwhile
    if (ledger->mark_dirty(store_detail::kInputsSlot)) return;
    if (layout.dir().remove_file(record.path)) continue;
    ledger->apply(store_detail::kInputsSlot, record_footprint(present.size), record_footprint(0));
    if (problems) problems->push_back({layout.shown(record.path).string(), "inputs record no entry names (removed)"});
  }
  (void)ledger->finish();
}

}  // namespace jitcache
