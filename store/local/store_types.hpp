// What the local store's calls take and give back (store/local/disk_store.hpp): limits, results,
// listings, reports. Apart from DiskStore so that the store's own parts (size records, layout,
// shard index) name them without including the class they serve.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"

namespace jitcache {

struct StoreLimits {
  std::uint64_t max_size = 1ull << 30;  // bytes (binary + sidecar) before eviction
  double low_water = 0.8;               // eviction goes down to max_size * low_water
  std::uint64_t max_age_s = 0;          // 0 = no age limit (by last access)
  std::uint64_t min_entry_size = 0;     // binaries smaller than this are not stored
  std::uint64_t max_entry_size = 256ull << 20;
  bool read_only = false;
  // Entries an automatic eviction or maintenance pass scans at most (store/local/pass_scope.hpp); it
  // removes up to 20 % of them (1 - low_water), so that one pass stays within ~50 ms even where a
  // removal costs milliseconds (docs/benchmarks.md Part 5); `jitcache evict` scans everything.
  std::uint64_t pass_entries = 64;
  // False for processes that serve a store another process made (the capture helper): a root
  // gone since, an unmounted disk say, stays gone rather than reappearing on another file system.
  bool create_root = true;
};

enum class LoadStatus { hit, miss, corrupt, error };

struct LoadResult {
  LoadStatus status = LoadStatus::miss;
  std::string binary;
  nlohmann::json sidecar;
  // A hit's `answers` as JSON text, left out of `sidecar` (pack::kAnswersTextField); null when
  // absent or when the sidecar was parsed whole (then it is in `sidecar`).
  std::shared_ptr<const std::string> answers;
  std::string reason;  // why corrupt / error
};

enum class SaveStatus { stored, skipped, error };  // skipped: read-only or entry size limits

struct SaveResult {
  SaveStatus status = SaveStatus::error;
  std::string reason;
  std::uint64_t evicted_entries = 0;
};

struct EntryInfo {
  Digest128 key;
  std::uint64_t bytes = 0;           // every file of the entry
  std::int64_t last_access_ns = 0;   // entry file (format 1: sidecar) mtime
  nlohmann::json sidecar;
};

struct SizeInfo {
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;
};

struct EvictionReport {
  std::uint64_t removed_entries = 0;
  std::uint64_t removed_bytes = 0;
  // clear(): folders another user owns or may write, renamed aside (<name>.foreign-<time>) so
  // that the store works again; this user cannot remove what is inside them. Their new paths.
  std::vector<std::string> moved_aside;
};

// How far a long whole-store operation is, for a progress bar: `done` of `total` steps of the
// phase `what` ("scanning" shards, "evicting", "checking", "removing" entries, "listing" shards).
using StoreProgress = std::function<void(const char* what, std::uint64_t done, std::uint64_t total)>;

struct VerifyProblem {
  std::string path;
  std::string problem;
};

}  // namespace jitcache
