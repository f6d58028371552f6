// Listing the store through its per-shard index (store/local/shard_index.hpp).
#include <algorithm>

#include "hashing/bounded_json.hpp"
#include "store/local/disk_store_impl.hpp"
#include "store/local/shard_index.hpp"

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
  fileops::AtomicFile index(layout.dir());
  if (store_detail::write_temp_file(layout, store_detail::format_shard_index(slot, generation, entries), ".index.tmp",
                                    &index)) {
    return;
  }
  (void)index.commit(index_file(slot));
}

constexpr std::size_t kVisitEntries = 512;

// Each listed entry as it is on disk now (its last use, its bytes); false when it is gone. Entries
// come in key order: each folder is opened (and trust-checked) once, from the one above it. One
// stat per entry by its bare name (a format 1 pair is looked for only when there is no entry file).
class EntryStat {
 public:
  explicit EntryStat(const store_detail::StoreLayout& layout) : layout_(layout) {}
  bool measure(const Digest128& key, EntryFootprint* footprint) {
    const std::string hex = key.hex();
    if (hex.compare(0, 2, outer_name_) != 0) {
      outer_name_ = hex.substr(0, 2);
      outer_ = fileops::Dir();
      (void)layout_.dir().open_dir(outer_name_, &outer_);
      inner_name_.clear();
    }
    if (hex.compare(2, 2, inner_name_) != 0) {
      inner_name_ = hex.substr(2, 2);
      shard_ = fileops::Dir();
      if (outer_.is_open()) (void)outer_.open_dir(inner_name_, &shard_);
    }
    if (!shard_.is_open()) return false;
    *footprint = EntryFootprint{};
    if (shard_.stat(hex + ".entry", &footprint->entry)) return false;
    if (footprint->entry.kind == fileops::FileKind::missing) {  // a format 1 entry
      const store_detail::EntryPaths paths = store_detail::entry_paths(hex);
      if (store_detail::measure_entry_in(shard_, paths, footprint, store_detail::kSidecarName | store_detail::kBinaryName)) {
        return false;
      }
      return footprint->committed;
    }
    footprint->committed = footprint->entry.kind == fileops::FileKind::regular;
    footprint->bytes = footprint->entry.size;
    return footprint->committed;
  }

 private:
  const store_detail::StoreLayout& layout_;
  std::string outer_name_, inner_name_;
  fileops::Dir outer_, shard_;
};

}  // namespace

std::vector<EntryInfo> DiskStore::list_summaries(const StoreProgress& progress) {
  std::vector<EntryInfo> listed;
  visit_summaries(
      [&](std::vector<EntryInfo>& shard) {
        listed.insert(listed.end(), std::make_move_iterator(shard.begin()), std::make_move_iterator(shard.end()));
      },
      progress);
  return listed;
}

void DiskStore::visit_summaries(const ShardVisitor& visit, const StoreProgress& progress) {
  try {
    impl_->visit_summaries(visit, progress);
  } catch (...) {
  }
}

void DiskStore::Impl::visit_summaries(const DiskStore::ShardVisitor& visit, const StoreProgress& progress) {
  std::vector<fileops::DirEntry> names;
  if (!layout.dir().is_open() || layout.dir().list("", &names)) return;
  std::erase_if(names, [](const fileops::DirEntry& name) { return !store_detail::is_shard_name(name.name); });
  std::sort(names.begin(), names.end(),
            [](const fileops::DirEntry& a, const fileops::DirEntry& b) { return a.name < b.name; });
  if (!limits.read_only) {
    // Slots no writer has recorded yet (a store from before them) are counted now, once: their
    // shards' indexes can then be written.
    std::optional<store_detail::SizeLedger> ledger;
    std::array<ShardRecord, store_detail::kSlotCount> ignored;
    if (!begin_ledger(store_detail::kLongLockWait, &ledger)) (void)ledger->shard_records(&ignored);
  }
  EntryStat stat(layout);
  std::vector<EntryInfo> listed;
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
    std::sort(entries->begin(), entries->end(),
              [](const IndexedEntry& a, const IndexedEntry& b) { return a.key < b.key; });
    // Handed over in pieces: a shard of a million-entry store holds ~3 900 entries, and the first
    // lines should not wait for all their stats.
    for (std::size_t first = 0; first < entries->size(); first += kVisitEntries) {
      listed.clear();
      for (std::size_t i = first; i < std::min(first + kVisitEntries, entries->size()); ++i) {
        IndexedEntry& entry = (*entries)[i];
        EntryFootprint footprint;
        if (!stat.measure(entry.key, &footprint)) continue;
        listed.push_back({entry.key, footprint.bytes, footprint.commit_file().mtime_ns, std::move(entry.summary)});
      }
      if (!listed.empty()) visit(listed);
    }
  }
  if (progress) progress("listing", names.size(), names.size());
}

}  // namespace jitcache
