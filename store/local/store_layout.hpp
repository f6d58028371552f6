// Where everything lives under the store root, and the scan that finds every entry.
// Every path here is relative to the root, which is reached only through the root folder held
// open (dir()): a root path that is swapped for a symlink after the store opened leads nowhere.
// shown() turns a relative path into the full one for messages.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "hashing/digest.hpp"
#include "store/files/file_ops.hpp"
#include "store/local/shard_records.hpp"
#include "store/local/store_types.hpp"

namespace jitcache::store_detail {

// An entry's names. Store format 2 writes one file, <key>.entry (store/local/entry_file.hpp); format 1
// stores (<key>.bin + <key>.json, the sidecar last as the commit marker) are still read, and a
// save or removal of the key takes their files away (docs/store-format.md, "Upgrading").
inline constexpr std::string_view kFormatMarkText = "jitcache-store-format 2\n";

struct EntryPaths {
  std::string key_hex;              // the key the sidecar must name
  std::filesystem::path outer_dir;  // <k0k1>
  std::filesystem::path inner_dir;  // <k0k1>/<k2k3>
  std::filesystem::path entry;      // <inner_dir>/<key>.entry (format 2)
  std::filesystem::path binary;     // <inner_dir>/<key>.bin (format 1)
  std::filesystem::path sidecar;    // <inner_dir>/<key>.json (format 1)
  std::string entry_name;           // <key>.entry
  std::string binary_name;          // <key>.bin
  std::string sidecar_name;         // <key>.json
};

class StoreLayout {
 public:
  StoreLayout(std::filesystem::path root, fileops::Dir dir)
      : root_(std::move(root)), dir_(std::make_shared<const fileops::Dir>(std::move(dir))) {}

  const std::filesystem::path& root() const { return root_; }
  const fileops::Dir& dir() const { return *dir_; }
  // For what may outlive the store (a KeyLock released after the store is gone).
  const std::shared_ptr<const fileops::Dir>& shared_dir() const { return dir_; }
  std::filesystem::path shown(const std::filesystem::path& relative) const { return root_ / relative; }
  std::filesystem::path tmp_dir() const { return "tmp"; }
  std::filesystem::path quarantine_dir() const { return "quarantine"; }
  std::filesystem::path size_record() const { return "size"; }
  // Per-shard size records (store/local/shard_records.hpp): shards/<k0k1>, shards/in.
  std::filesystem::path shard_records() const { return "shards"; }
  std::filesystem::path shard_record(int slot) const { return shard_records() / shard_name(slot); }
  // Names the newest store format written here (kFormatMarkText); readers serve formats 1 and 2.
  std::filesystem::path format_mark() const { return "format"; }
  std::filesystem::path size_lock() const { return "size.lock"; }
  std::filesystem::path evict_lock() const { return "evict.lock"; }
  // Its mtime is when the last full maintenance pass (eviction scan + sweep) ran.
  std::filesystem::path maintenance_stamp() const { return "last_maintenance"; }
  // Per-key build locks (cross-process single-flight): <root>/locks/<key>.lock
  std::filesystem::path locks_dir() const { return "locks"; }
  std::filesystem::path key_lock(const Digest128& key) const { return locks_dir() / (key.hex() + ".lock"); }
  // Left by a process waiting for the key's lock: its holder then knows the binary is wanted now.
  std::filesystem::path key_wanted(const Digest128& key) const { return locks_dir() / (key.hex() + ".wanted"); }
  // Held by whoever owes the key's entry to the store (an app that handed it to its capture
  // helper, then the helper) until it is stored or given up: a capture in flight.
  std::filesystem::path key_capture(const Digest128& key) const { return locks_dir() / (key.hex() + ".capture"); }
  // Held by an ended app's capture helper until its last write (DiskStore::mark_helper_ending).
  std::filesystem::path helper_ending(std::int64_t app_pid) const {
    return locks_dir() / ("helper-" + std::to_string(app_pid) + ".ending");
  }
  // One file per app process at work on this store, each locked by its app (DiskStore::announce_app).
  std::filesystem::path apps_dir() const { return locks_dir() / "apps"; }

  EntryPaths entry(const Digest128& key) const;
  // <root>/quarantine/<key>.<when_ns>.<extension>
  std::filesystem::path quarantine_file(const Digest128& key, std::int64_t when_ns,
                                        std::string_view extension) const;
  // A name in tmp/ that no other thread or process uses: pid, time and a counter.
  std::filesystem::path new_temp_file(std::string_view suffix) const;

 private:
  std::filesystem::path root_;
  std::shared_ptr<const fileops::Dir> dir_;
};

// Names of the two folder levels: two lowercase hex digits each.
bool is_shard_name(std::string_view name);

// What one entry occupies, for the size accounting. Only a committed entry (an entry file, or a
// format 1 sidecar) counts: its bytes are those of every file at its names (a format 1 pair left
// next to the entry file by a save cut short counts too, until it is removed).
struct EntryFootprint {
  bool committed = false;
  std::uint64_t bytes = 0;
  fileops::FileInfo entry;
  fileops::FileInfo sidecar;
  fileops::FileInfo binary;
  // The file whose arrival committed the entry, whose mtime is the LRU clock: the entry file, else
  // the format 1 sidecar.
  const fileops::FileInfo& commit_file() const {
    return entry.kind == fileops::FileKind::regular ? entry : sidecar;
  }
  bool has_any() const {
    return entry.kind != fileops::FileKind::missing || sidecar.kind != fileops::FileKind::missing ||
           binary.kind != fileops::FileKind::missing;
  }
  bool all_files_or_missing() const;
};
inline bool is_file_or_missing(const fileops::FileInfo& info) {
  return info.kind == fileops::FileKind::regular || info.kind == fileops::FileKind::missing;
}
inline bool EntryFootprint::all_files_or_missing() const {
  return is_file_or_missing(entry) && is_file_or_missing(sidecar) && is_file_or_missing(binary);
}
// Which of an entry's names to look at (the others count as missing): the scan passes those its
// folder listing showed.
inline constexpr unsigned kEntryName = 1, kSidecarName = 2, kBinaryName = 4, kAllEntryNames = 7;
std::error_code measure_entry(const StoreLayout& layout, const EntryPaths& paths, EntryFootprint* footprint,
                              unsigned names = kAllEntryNames);
// The same relative to the entry's folder (<k0k1>/<k2k3>) held open.
std::error_code measure_entry_in(const fileops::Dir& shard, const EntryPaths& paths, EntryFootprint* footprint,
                                 unsigned names = kAllEntryNames);
// The sidecar's text of a committed entry of either format, for the tools (list, the sweep of
// recorded inputs): only the entry file's header and sidecar are read, and checked against the
// header's lengths and checksum. Fails with no_such_file_or_directory when there is no entry.
std::error_code read_entry_sidecar(const StoreLayout& layout, const EntryPaths& paths, std::string* text);
EntryPaths entry_paths(std::string_view key_hex);

struct ScannedEntry {
  Digest128 key;
  EntryPaths paths;
  EntryFootprint footprint;  // footprint.committed is false for an orphan binary
};

struct ScanError {
  std::filesystem::path path;
  std::string message;
};

struct StoreScan {
  std::vector<ScannedEntry> committed;         // entry file or format 1 sidecar present
  std::vector<ScannedEntry> orphan_binaries;   // .bin without sidecar
  std::vector<ScannedEntry> not_files;         // uncommitted, with a folder, FIFO... at an entry name
  std::vector<std::filesystem::path> unexpected;  // anything else inside the shard folders
  std::vector<ScanError> errors;               // folders or files that could not be read
  std::vector<ScanError> untrusted;            // store and shard folders failing the trust rule, and why
  std::vector<std::filesystem::path> foreign_dirs;  // the same folders, relative to the root
  std::uint64_t input_record_bytes = 0;        // recorded inputs (below): counted in bytes
};
StoreScan scan_store(const StoreLayout& layout, const StoreProgress& progress = nullptr);  // "scanning" shards
// Adds one level-1 shard folder (<k0k1>, by slot: store/local/shard_records.hpp) to `scan`; a missing
// folder is an empty shard.
void scan_shard(const StoreLayout& layout, int slot, StoreScan* scan);
// Part of one: its level-2 folders in order from `first_inner` (wrapping around) until they held
// `entries` committed entries (or all were seen), for a pass over a shard bigger than its budget.
void scan_shard_part(const StoreLayout& layout, int slot, int first_inner, std::uint64_t entries, StoreScan* scan);

SizeInfo totals_of(const StoreScan& scan);
// The same per shard slot (the inputs slot holds the recorded inputs' bytes).
std::array<SizeInfo, kSlotCount> totals_by_slot(const StoreScan& scan);

// Recorded inputs in the store (docs/store-format.md, "Recorded inputs"):
//
//   <root>/inputs/<d0d1>/<digest>.rec   one record per distinct program, named by the XXH3-128 of
//                                       its bytes; the sidecars of the entries built from it name
//                                       it ("inputs": digest), so N devices or compiler versions of
//                                       one program share one record.
//
// Records count in the size record's bytes (not in its entry count). A record no committed
// sidecar names is removed by the maintenance pass once it is older than the stale-file age
// (its entry may still be on its way: written by a background store or a capture helper).
inline std::filesystem::path inputs_dir() { return "inputs"; }
std::filesystem::path input_record_path(const Digest128& digest);

struct InputRecordFile {
  Digest128 digest;
  std::filesystem::path path;  // relative to the root
  fileops::FileInfo info;
};

// Every well-named regular record file; anything else under inputs/ is left out (and not counted).
std::vector<InputRecordFile> scan_input_records(const StoreLayout& layout);

}  // namespace jitcache::store_detail
