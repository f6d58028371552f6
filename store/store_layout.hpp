// Where everything lives under the store root, and the scan that finds every entry.
// Every path here is relative to the root, which is reached only through the root folder held
// open (dir()): a root path that is swapped for a symlink after the store opened leads nowhere.
// shown() turns a relative path into the full one for messages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "hashing/digest.hpp"
#include "store/disk_store.hpp"
#include "store/file_ops.hpp"

namespace jitcache::store_detail {

struct EntryPaths {
  std::string key_hex;              // the key the sidecar must name
  std::filesystem::path outer_dir;  // <k0k1>
  std::filesystem::path inner_dir;  // <k0k1>/<k2k3>
  std::filesystem::path binary;     // <inner_dir>/<key>.bin
  std::filesystem::path sidecar;    // <inner_dir>/<key>.json
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

// What one entry occupies, for the size accounting. Only a committed entry (one with a sidecar)
// counts: its bytes are the sidecar's size plus the binary's when there is one.
struct EntryFootprint {
  bool committed = false;
  std::uint64_t bytes = 0;
  fileops::FileInfo sidecar;
  fileops::FileInfo binary;
};
inline bool is_file_or_missing(const fileops::FileInfo& info) {
  return info.kind == fileops::FileKind::regular || info.kind == fileops::FileKind::missing;
}
std::error_code measure_entry(const StoreLayout& layout, const EntryPaths& paths, EntryFootprint* footprint);
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
  std::vector<ScannedEntry> committed;         // sidecar present
  std::vector<ScannedEntry> orphan_binaries;   // .bin without sidecar
  std::vector<ScannedEntry> not_files;         // uncommitted, with a folder, FIFO... at an entry name
  std::vector<std::filesystem::path> unexpected;  // anything else inside the shard folders
  std::vector<ScanError> errors;               // folders or files that could not be read
  std::vector<ScanError> untrusted;            // store and shard folders failing the trust rule, and why
  std::vector<std::filesystem::path> foreign_dirs;  // the same folders, relative to the root
  std::uint64_t input_record_bytes = 0;        // recorded inputs (input_records.hpp): counted in bytes
};
StoreScan scan_store(const StoreLayout& layout);

SizeInfo totals_of(const StoreScan& scan);

}  // namespace jitcache::store_detail
