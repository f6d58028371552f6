#include "store/local/store_layout.hpp"

#include "store/local/entry_file.hpp"
#include "store/local/shard_records.hpp"

#include <algorithm>
#include <atomic>
#include <map>

namespace jitcache::store_detail {
namespace {

bool is_lower_hex(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// "<32 hex>.<ext>" -> key, only when the name is exactly what entry() would produce.
std::optional<Digest128> key_of(std::string_view name, std::string_view extension) {
  if (name.size() != 32 + 1 + extension.size()) return std::nullopt;
  if (name.substr(32, 1) != "." || name.substr(33) != extension) return std::nullopt;
  std::string_view hex = name.substr(0, 32);
  if (!is_lower_hex(hex)) return std::nullopt;
  return Digest128::from_hex(hex);
}

bool is_directory(const StoreLayout& layout, const std::filesystem::path& path, const fileops::DirEntry& entry) {
  if (entry.kind == fileops::FileKind::directory) return true;
  if (entry.kind != fileops::FileKind::other) return false;
  fileops::FileInfo info;  // the listing did not say: ask
  return !layout.dir().stat(path, &info) && info.kind == fileops::FileKind::directory;
}

// A folder another user owns or may write (left from a time the root was open to them): a shard
// folder's entries are refused on load (the scan still counts them: they occupy the store); below
// one of the store's own folders every save, lock or recorded input fails. `jitcache clear` moves
// them aside.
void note_untrusted(const StoreLayout& layout, const std::filesystem::path& dir, const char* what,
                    const std::string& consequence, StoreScan* scan) {
  fileops::FileInfo info;
  if (layout.dir().stat(dir, &info) || info.kind == fileops::FileKind::missing) return;
  std::error_code error = fileops::check_trusted(info);
  if (!error && info.kind != fileops::FileKind::directory) error = std::make_error_code(std::errc::not_a_directory);
  if (!error) return;
  scan->untrusted.push_back({layout.shown(dir), std::string(what) + " is " + error.message() + ": " + consequence +
                                                    " (`jitcache clear` moves it aside)"});
  scan->foreign_dirs.push_back(dir);
}

constexpr const char* kShardConsequence = "its entries are not served";

void scan_inner_dir(const StoreLayout& layout, const std::filesystem::path& dir, const std::string& prefix,
                    StoreScan* scan) {
  std::vector<fileops::DirEntry> names;
  if (auto error = layout.dir().list(dir, &names)) {
    scan->errors.push_back({layout.shown(dir), error.message()});
    return;
  }
  // Group an entry's names by key; std::map keeps the result in key order. Only the names listed
  // are measured: a format 2 store costs one stat per entry.
  std::map<Digest128, ScannedEntry> found;
  std::map<Digest128, unsigned> listed;
  for (const auto& name : names) {
    std::optional<Digest128> key;
    unsigned which = kEntryName;
    if (!(key = key_of(name.name, "entry")) && !(which = kSidecarName, key = key_of(name.name, "json")) &&
        !(which = kBinaryName, key = key_of(name.name, "bin"))) {
      scan->unexpected.push_back(layout.shown(dir / name.name));
      continue;
    }
    if (key->hex().compare(0, 4, prefix) != 0) {  // in the wrong shard: not ours to trust
      scan->unexpected.push_back(layout.shown(dir / name.name));
      continue;
    }
    auto& entry = found[*key];
    entry.key = *key;
    listed[*key] |= which;
  }
  // Measured relative to the folder held open (one stat per file, not a walk from the root each);
  // a folder the trust rule refuses (noted by the caller) is measured through the root.
  fileops::Dir shard;
  const bool opened = !layout.dir().open_dir(dir, &shard);
  for (auto& [key, entry] : found) {
    entry.paths = entry_paths(key.hex());
    const std::error_code error = opened ? measure_entry_in(shard, entry.paths, &entry.footprint, listed[key])
                                         : measure_entry(layout, entry.paths, &entry.footprint, listed[key]);
    if (error) {
      scan->errors.push_back({layout.shown(entry.paths.entry), error.message()});
      continue;
    }
    const EntryFootprint& footprint = entry.footprint;
    if (footprint.committed) {
      scan->committed.push_back(std::move(entry));
    } else if (footprint.entry.kind == fileops::FileKind::missing &&
               footprint.sidecar.kind == fileops::FileKind::missing &&
               footprint.binary.kind == fileops::FileKind::regular) {
      scan->orphan_binaries.push_back(std::move(entry));
    } else if (footprint.has_any()) {
      scan->not_files.push_back(std::move(entry));  // a folder, FIFO or link at a file's name
    }
  }
}

}  // namespace

bool is_shard_name(std::string_view name) { return name.size() == 2 && is_lower_hex(name); }

EntryPaths entry_paths(std::string_view key_hex) {
  EntryPaths paths;
  paths.key_hex = std::string(key_hex);
  paths.outer_dir = std::string(key_hex.substr(0, 2));
  paths.inner_dir = paths.outer_dir / std::string(key_hex.substr(2, 2));
  paths.entry_name = paths.key_hex + ".entry";
  paths.entry = paths.inner_dir / paths.entry_name;
  paths.binary_name = paths.key_hex + ".bin";
  paths.sidecar_name = paths.key_hex + ".json";
  paths.binary = paths.inner_dir / paths.binary_name;
  paths.sidecar = paths.inner_dir / paths.sidecar_name;
  return paths;
}

EntryPaths StoreLayout::entry(const Digest128& key) const { return entry_paths(key.hex()); }

std::filesystem::path StoreLayout::quarantine_file(const Digest128& key, std::int64_t when_ns,
                                                   std::string_view extension) const {
  return quarantine_dir() /
         (key.hex() + "." + std::to_string(when_ns) + "." + std::string(extension));
}

std::filesystem::path StoreLayout::new_temp_file(std::string_view suffix) const {
  static std::atomic<std::uint64_t> counter{0};
  const std::string name = std::to_string(fileops::current_process_id()) + "-" +
                           std::to_string(fileops::now_ns()) + "-" +
                           std::to_string(counter.fetch_add(1)) + std::string(suffix);
  return tmp_dir() / name;
}

namespace {

// Stats the names `names` selects, each below `base` by the path `path_of` gives it.
template <typename PathOf>
std::error_code measure(const fileops::Dir& base, const EntryPaths& paths, EntryFootprint* footprint, unsigned names,
                        PathOf path_of) {
  *footprint = EntryFootprint{};
  const std::pair<unsigned, fileops::FileInfo*> files[] = {
      {kEntryName, &footprint->entry}, {kSidecarName, &footprint->sidecar}, {kBinaryName, &footprint->binary}};
  for (const auto& [name, info] : files) {
    if (!(names & name)) continue;
    if (auto error = base.stat(path_of(paths, name), info)) return error;
  }
  footprint->committed = footprint->entry.kind == fileops::FileKind::regular ||
                         footprint->sidecar.kind == fileops::FileKind::regular;
  if (footprint->committed) {
    for (const fileops::FileInfo* file : {&footprint->entry, &footprint->sidecar, &footprint->binary}) {
      if (file->kind == fileops::FileKind::regular) footprint->bytes += file->size;
    }
  }
  return {};
}

}  // namespace

std::error_code measure_entry(const StoreLayout& layout, const EntryPaths& paths, EntryFootprint* footprint,
                              unsigned names) {
  return measure(layout.dir(), paths, footprint, names, [](const EntryPaths& p, unsigned name) {
    return name == kEntryName ? p.entry : name == kSidecarName ? p.sidecar : p.binary;
  });
}

std::error_code measure_entry_in(const fileops::Dir& shard, const EntryPaths& paths, EntryFootprint* footprint,
                                 unsigned names) {
  return measure(shard, paths, footprint, names, [](const EntryPaths& p, unsigned name) {
    return std::filesystem::path(name == kEntryName ? p.entry_name : name == kSidecarName ? p.sidecar_name : p.binary_name);
  });
}

std::error_code read_entry_sidecar(const StoreLayout& layout, const EntryPaths& paths, std::string* text) {
  fileops::File file;
  std::error_code error = fileops::File::open_read(layout.dir(), paths.entry, &file);
  if (error == std::errc::no_such_file_or_directory) {  // format 1
    error = fileops::File::open_read(layout.dir(), paths.sidecar, &file, kMaxSidecarBytes);
    return error ? error : file.read_all(text, kMaxSidecarBytes);
  }
  fileops::FileInfo info;
  std::string header_bytes;
  if (error || (error = file.info(&info)) || (error = file.read_at(0, kEntryHeaderBytes, &header_bytes))) return error;
  std::string why;
  const std::optional<EntryHeader> header = decode_entry_header(header_bytes, info.size, &why);
  if (!header || header->sidecar_bytes > kMaxSidecarBytes) return std::make_error_code(std::errc::illegal_byte_sequence);
  if ((error = file.read_at(kEntryHeaderBytes, static_cast<std::size_t>(header->sidecar_bytes), text))) return error;
  if (text->size() != header->sidecar_bytes || xxh3_64(*text) != header->sidecar_xxh3) {
    return std::make_error_code(std::errc::illegal_byte_sequence);
  }
  return {};
}

StoreScan scan_store(const StoreLayout& layout, const StoreProgress& progress) {
  StoreScan scan;
  std::vector<fileops::DirEntry> outer;
  if (auto error = layout.dir().list("", &outer)) {
    scan.errors.push_back({layout.root(), error.message()});
    return scan;
  }
  for (const std::filesystem::path& own : {layout.tmp_dir(), layout.locks_dir(), inputs_dir(), layout.quarantine_dir()}) {
    note_untrusted(layout, own, "store folder", "every save, build lock or recorded input that needs it fails", &scan);
  }
  std::erase_if(outer, [&](const fileops::DirEntry& first) {
    return !is_shard_name(first.name) || !is_directory(layout, first.name, first);
  });
  for (std::size_t i = 0; i < outer.size(); ++i) {
    scan_shard(layout, shard_slot(outer[i].name), &scan);
    if (progress) progress("scanning", i + 1, outer.size());
  }
  for (const InputRecordFile& record : scan_input_records(layout)) scan.input_record_bytes += record.info.size;
  return scan;
}

namespace {

// The level-2 folders of shard `slot` in name order, from `first_inner` on (wrapping), each scanned
// while `more` says so.
template <typename More>
void scan_inner_dirs(const StoreLayout& layout, int slot, int first_inner, StoreScan* scan, More more) {
  const std::string name = shard_name(slot);
  const std::filesystem::path outer_dir = name;
  std::vector<fileops::DirEntry> inner;
  if (auto error = layout.dir().list(outer_dir, &inner)) {
    if (error != std::errc::no_such_file_or_directory) scan->errors.push_back({layout.shown(outer_dir), error.message()});
    return;
  }
  note_untrusted(layout, outer_dir, "shard folder", kShardConsequence, scan);
  std::sort(inner.begin(), inner.end(), [](const fileops::DirEntry& a, const fileops::DirEntry& b) { return a.name < b.name; });
  const auto start = std::lower_bound(inner.begin(), inner.end(), shard_name(first_inner),
                                      [](const fileops::DirEntry& entry, const std::string& wanted) { return entry.name < wanted; });
  std::rotate(inner.begin(), start, inner.end());
  for (const auto& second : inner) {
    if (!more()) return;
    const auto inner_dir = outer_dir / second.name;
    if (!is_shard_name(second.name) || !is_directory(layout, inner_dir, second)) {
      scan->unexpected.push_back(layout.shown(inner_dir));
      continue;
    }
    note_untrusted(layout, inner_dir, "shard folder", kShardConsequence, scan);
    scan_inner_dir(layout, inner_dir, name + second.name, scan);
  }
}

}  // namespace

void scan_shard(const StoreLayout& layout, int slot, StoreScan* scan) {
  scan_inner_dirs(layout, slot, 0, scan, [] { return true; });
}

void scan_shard_part(const StoreLayout& layout, int slot, int first_inner, std::uint64_t entries, StoreScan* scan) {
  const std::size_t before = scan->committed.size();
  scan_inner_dirs(layout, slot, first_inner, scan, [&] { return scan->committed.size() - before < entries; });
}

std::array<SizeInfo, kSlotCount> totals_by_slot(const StoreScan& scan) {
  std::array<SizeInfo, kSlotCount> totals{};
  totals[kInputsSlot].bytes = scan.input_record_bytes;
  for (const auto& entry : scan.committed) {
    SizeInfo& shard = totals[static_cast<std::size_t>(shard_slot(entry.key))];
    shard.bytes += entry.footprint.bytes;
    shard.entries += 1;
  }
  return totals;
}

SizeInfo totals_of(const StoreScan& scan) {
  SizeInfo totals;
  totals.bytes = scan.input_record_bytes;
  for (const auto& entry : scan.committed) {
    totals.bytes += entry.footprint.bytes;
    totals.entries += 1;
  }
  return totals;
}

// Recorded inputs (docs/store-format.md, "Recorded inputs").
std::filesystem::path input_record_path(const Digest128& digest) {
  const std::string hex = digest.hex();
  return inputs_dir() / hex.substr(0, 2) / (hex + ".rec");
}

std::vector<InputRecordFile> scan_input_records(const StoreLayout& layout) {
  std::vector<InputRecordFile> records;
  std::vector<fileops::DirEntry> shards;
  if (layout.dir().list(inputs_dir(), &shards)) return records;
  for (const auto& shard : shards) {
    if (!is_shard_name(shard.name)) continue;
    std::vector<fileops::DirEntry> names;
    if (layout.dir().list(inputs_dir() / shard.name, &names)) continue;
    for (const auto& name : names) {
      if (name.name.size() != 36 || name.name.compare(32, 4, ".rec") != 0) continue;
      std::optional<Digest128> digest = Digest128::from_hex(std::string_view(name.name).substr(0, 32));
      if (!digest || digest->hex().compare(0, 2, shard.name) != 0) continue;
      InputRecordFile record{*digest, inputs_dir() / shard.name / name.name, {}};
      if (layout.dir().stat(record.path, &record.info) || record.info.kind != fileops::FileKind::regular) continue;
      records.push_back(std::move(record));
    }
  }
  return records;
}

}  // namespace jitcache::store_detail
