#include "store/store_layout.hpp"
#include "store/input_records.hpp"

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
  // Pair sidecars with binaries by key; std::map keeps the result in key order.
  std::map<Digest128, ScannedEntry> found;
  for (const auto& name : names) {
    std::optional<Digest128> key;
    if (!(key = key_of(name.name, "json")) && !(key = key_of(name.name, "bin"))) {
      scan->unexpected.push_back(layout.shown(dir / name.name));
      continue;
    }
    if (key->hex().compare(0, 4, prefix) != 0) {  // in the wrong shard: not ours to trust
      scan->unexpected.push_back(layout.shown(dir / name.name));
      continue;
    }
    auto& entry = found[*key];
    entry.key = *key;
  }
  for (auto& [key, entry] : found) {
    entry.paths = entry_paths(key.hex());
    if (auto error = measure_entry(layout, entry.paths, &entry.footprint)) {
      scan->errors.push_back({layout.shown(entry.paths.sidecar), error.message()});
      continue;
    }
    if (entry.footprint.committed) {
      scan->committed.push_back(std::move(entry));
    } else if (entry.footprint.sidecar.kind == fileops::FileKind::missing &&
               entry.footprint.binary.kind == fileops::FileKind::regular) {
      scan->orphan_binaries.push_back(std::move(entry));
    } else if (entry.footprint.sidecar.kind != fileops::FileKind::missing ||
               entry.footprint.binary.kind != fileops::FileKind::missing) {
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

std::error_code measure_entry(const StoreLayout& layout, const EntryPaths& paths, EntryFootprint* footprint) {
  *footprint = EntryFootprint{};
  if (auto error = layout.dir().stat(paths.sidecar, &footprint->sidecar)) return error;
  if (auto error = layout.dir().stat(paths.binary, &footprint->binary)) return error;
  footprint->committed = footprint->sidecar.kind == fileops::FileKind::regular;
  if (footprint->committed) {
    footprint->bytes = footprint->sidecar.size;
    if (footprint->binary.kind == fileops::FileKind::regular) footprint->bytes += footprint->binary.size;
  }
  return {};
}

StoreScan scan_store(const StoreLayout& layout) {
  StoreScan scan;
  std::vector<fileops::DirEntry> outer;
  if (auto error = layout.dir().list("", &outer)) {
    scan.errors.push_back({layout.root(), error.message()});
    return scan;
  }
  for (const std::filesystem::path& own : {layout.tmp_dir(), layout.locks_dir(), inputs_dir(), layout.quarantine_dir()}) {
    note_untrusted(layout, own, "store folder", "every save, build lock or recorded input that needs it fails", &scan);
  }
  for (const auto& first : outer) {
    const std::filesystem::path outer_dir = first.name;
    if (!is_shard_name(first.name) || !is_directory(layout, outer_dir, first)) continue;
    note_untrusted(layout, outer_dir, "shard folder", kShardConsequence, &scan);
    std::vector<fileops::DirEntry> inner;
    if (auto error = layout.dir().list(outer_dir, &inner)) {
      scan.errors.push_back({layout.shown(outer_dir), error.message()});
      continue;
    }
    for (const auto& second : inner) {
      const auto inner_dir = outer_dir / second.name;
      if (!is_shard_name(second.name) || !is_directory(layout, inner_dir, second)) {
        scan.unexpected.push_back(layout.shown(inner_dir));
        continue;
      }
      note_untrusted(layout, inner_dir, "shard folder", kShardConsequence, &scan);
      scan_inner_dir(layout, inner_dir, first.name + second.name, &scan);
    }
  }
  for (const InputRecordFile& record : scan_input_records(layout)) scan.input_record_bytes += record.info.size;
  return scan;
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

}  // namespace jitcache::store_detail
