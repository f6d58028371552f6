// Where everything lives under the store root, and the scan that finds every entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "hashing/digest.hpp"
#include "store/disk_store.hpp"
#include "store/file_ops.hpp"

namespace jitcache::store_detail {

struct EntryPaths {
  std::filesystem::path outer_dir;  // <root>/<k0k1>
  std::filesystem::path inner_dir;  // <root>/<k0k1>/<k2k3>
  std::filesystem::path binary;     // <inner_dir>/<key>.bin
  std::filesystem::path sidecar;    // <inner_dir>/<key>.json
};

class StoreLayout {
 public:
  explicit StoreLayout(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path tmp_dir() const { return root_ / "tmp"; }
  std::filesystem::path quarantine_dir() const { return root_ / "quarantine"; }
  std::filesystem::path size_record() const { return root_ / "size"; }
  std::filesystem::path size_lock() const { return root_ / "size.lock"; }
  std::filesystem::path evict_lock() const { return root_ / "evict.lock"; }
  // Its mtime is when the last full maintenance pass (eviction scan + sweep) ran.
  std::filesystem::path maintenance_stamp() const { return root_ / "last_maintenance"; }
  // Per-key build locks (cross-process single-flight): <root>/locks/<key>.lock
  std::filesystem::path locks_dir() const { return root_ / "locks"; }
  std::filesystem::path key_lock(const Digest128& key) const { return locks_dir() / (key.hex() + ".lock"); }
  // Left by a process waiting for the key's lock: its holder then knows the binary is wanted now.
  std::filesystem::path key_wanted(const Digest128& key) const { return locks_dir() / (key.hex() + ".wanted"); }

  EntryPaths entry(const Digest128& key) const;
  // <root>/quarantine/<key>.<when_ns>.<extension>
  std::filesystem::path quarantine_file(const Digest128& key, std::int64_t when_ns,
                                        std::string_view extension) const;
  // A name in tmp/ that no other thread or process uses: pid, time and a counter.
  std::filesystem::path new_temp_file(std::string_view suffix) const;

 private:
  std::filesystem::path root_;
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
std::error_code measure_entry(const EntryPaths& paths, EntryFootprint* footprint);

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
  std::vector<std::filesystem::path> unexpected;  // anything else inside the shard folders
  std::vector<ScanError> errors;               // folders or files that could not be read
};
StoreScan scan_store(const StoreLayout& layout);

SizeInfo totals_of(const StoreScan& scan);

}  // namespace jitcache::store_detail
