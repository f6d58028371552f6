// Listing the store through its per-shard index (store/shard_index.hpp).
#include <algorithm>

#include "hashing/bounded_json.hpp"
#include "store/disk_store_impl.hpp"
#include "store/shard_index.hpp"

namespace jitcache {

using store_detail::EntryFootprint;
using store_detail::IndexedEntry;
using store_detail::ShardRecord;

namespace {

std::filesystem::path index_dir() { return "index"; }
std::filesystem::path index_file(int slot) { return index_dir() / store_detail::shard_name(slot); }

std::optional<std::vector<IndexedEntry>> read_index(const store_detail::StoreLayout& layout, int slot,
                                                    std::uint64_t generation) {
  fileops::File file;
  std::string text;
  if (fileops::File::open_read(layout.dir(), index_file(slot), &file, store_detail::kMaxIndexBytes) ||
      file.read_all(&text, store_detail::kMaxIndexBytes)) {
    return std::nullopt;
  }
  return store_detail::parse_shard_index(slot, generation, text);
}

// The truth: the shard's entries from a scan, their summaries from their sidecars.
std::vector<IndexedEntry> index_by_scan(const store_detail::StoreLayout& layout, int slot) {
  store_detail::StoreScan scan;
  store_detail::scan_shard(layout, slot, &scan);
  std::vector<IndexedEntry> entries;
  entries.reserve(scan.committed.size());
  for (const auto& found : scan.committed) {
    std::string text;
    nlohmann::json summary;
    if (!store_detail::read_entry_sidecar(layout, found.paths, &text)) {
      summary = store_detail::sidecar_summary(parse_untrusted_json(text));
    }
    entries.push_back({found.key, found.footprint.bytes, std::move(summary)});
  }
  return entries;
}

void write_index(const store_detail::StoreLayout& layout, int slot, std::uint64_t generation,
                 const std::vector<IndexedEntry>& entries) {
  if (layout.dir().make_dir(index_dir())) return;
  std::filesystem::path temp;
  if (store_detail::write_temp_file(layout, store_detail::format_shard_index(slot, generation, entries), ".index.tmp",
                                    &temp)) {
    return;
  }
  if (layout.dir().rename(temp, index_file(slot))) (void)layout.dir().remove_file(temp);
}

// Each listed entry as it is on disk now (its last use, its bytes); false when it is gone. Entries
// come in key order: each folder is opened (and trust-checked) once, from the one above it.
class EntryStat {
 public:
  explicit EntryStat(const store_detail::StoreLayout& layout) : layout_(layout) {}
  bool measure(const Digest128& key, EntryFootprint* footprint) {
    const store_detail::EntryPaths paths = store_detail::entry_paths(key.hex());
    if (paths.outer_dir != outer_path_) {
      outer_path_ = paths.outer_dir;
      outer_ = fileops::Dir();
      (void)layout_.dir().open_dir(paths.outer_dir, &outer_);
      inner_path_.clear();
    }
    if (paths.inner_dir != inner_path_) {
      inner_path_ = paths.inner_dir;
      shard_ = fileops::Dir();
      if (outer_.is_open()) (void)outer_.open_dir(paths.inner_dir.filename(), &shard_);
    }
    if (!shard_.is_open()) return false;
    if (store_detail::measure_entry_in(shard_, paths, footprint, store_detail::kEntryName)) return false;
    if (footprint->entry.kind == fileops::FileKind::missing &&  // a format 1 entry
        store_detail::measure_entry_in(shard_, paths, footprint, store_detail::kSidecarName | store_detail::kBinaryName)) {
      return false;
    }
    return footprint->committed;
  }

 private:
  const store_detail::StoreLayout& layout_;
  std::filesystem::path outer_path_, inner_path_;
  fileops::Dir outer_, shard_;
};

}  // namespace

std::vector<EntryInfo> DiskStore::list_summaries(const StoreProgress& progress) {
  try {
    return impl_->list_summaries(progress);
  } catch (...) {
    return {};
  }
}

std::vector<EntryInfo> DiskStore::Impl::list_summaries(const StoreProgress& progress) {
  std::vector<EntryInfo> listed;
  std::vector<fileops::DirEntry> names;
  if (!layout.dir().is_open() || layout.dir().list("", &names)) return listed;
  std::erase_if(names, [](const fileops::DirEntry& name) { return !store_detail::is_shard_name(name.name); });
  if (!limits.read_only) {
    // Slots no writer has recorded yet (a store from before them) are counted now, once: their
    // shards' indexes can then be written.
    std::optional<store_detail::SizeLedger> ledger;
    std::array<ShardRecord, store_detail::kSlotCount> ignored;
    if (!begin_ledger(store_detail::kLongLockWait, &ledger)) (void)ledger->shard_records(&ignored);
  }
  EntryStat stat(layout);
  for (std::size_t shard = 0; shard < names.size(); ++shard) {
    if (progress) progress("listing", shard, names.size());
    const int slot = store_detail::shard_slot(names[shard].name);
    const std::optional<ShardRecord> record = store_detail::read_clean_shard_record(layout, slot);
    std::optional<std::vector<IndexedEntry>> entries;
    if (record) entries = read_index(layout, slot, record->generation);
    if (!entries) {
      entries = index_by_scan(layout, slot);
      // Written only when the shard did not change during the scan: its record is still the one
      // read before it (writers mark it dirty, with a new generation, before touching files).
      const std::optional<ShardRecord> after = store_detail::read_clean_shard_record(layout, slot);
      if (record && after && after->generation == record->generation && !limits.read_only) {
        write_index(layout, slot, record->generation, *entries);
      }
    }
    for (IndexedEntry& entry : *entries) {
      EntryFootprint footprint;
      if (!stat.measure(entry.key, &footprint)) continue;
      listed.push_back({entry.key, footprint.bytes, footprint.commit_file().mtime_ns, std::move(entry.summary)});
    }
  }
  if (progress) progress("listing", names.size(), names.size());
  std::sort(listed.begin(), listed.end(), [](const EntryInfo& a, const EntryInfo& b) { return a.key < b.key; });
  return listed;
}

}  // namespace jitcache
