// Counters every process adds to: kept in memory, merged into <root>/stats.json under a lock when
// the process flushes (after background stores and at exit), so no increment is lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace jitcache {

// Counter names (stable: `jitcache stats --json` prints them).
namespace counter {
inline constexpr const char* hit_memory = "hits_memory";
inline constexpr const char* hit_disk = "hits_disk";
inline constexpr const char* hit_remote = "hits_remote";
inline constexpr const char* hit_pack = "hits_pack";  // served by a read-only pack (JITCACHE_PACKS)
inline constexpr const char* pack_refused = "pack_entries_refused";  // a pack entry failed its checks
inline constexpr const char* miss = "misses";
inline constexpr const char* store = "stores";
inline constexpr const char* store_skipped = "stores_skipped";
inline constexpr const char* stale = "stale_rejected";  // driver refused a cached binary
inline constexpr const char* corrupt = "corrupt_entries";
inline constexpr const char* error = "errors";
inline constexpr const char* eviction = "evictions";
inline constexpr const char* bytes_stored = "bytes_stored";
inline constexpr const char* time_saved_us = "time_saved_us";  // recorded compile time - load time
inline constexpr const char* entry_refreshed = "entries_refreshed";  // recapture: rebuilt once and stored after use
inline constexpr const char* uncacheable_prefix = "uncacheable.";
// A capture helper's binary that did not load back in a fresh context: not stored (load_back.hpp).
inline constexpr const char* capture_helper_unloadable = "capture_helper_unloadable";
// The same for a binary `jitcache warm` rebuilt: not stored, that program reported failed.
inline constexpr const char* warm_unloadable = "warm_unloadable";
// Capture helpers' CPU in microseconds, one counter per step (core/cpu_account.hpp; docs/cli.md,
// stats): `helper_cpu_us.build` and so on, counted by the process that spent it.
inline constexpr const char* helper_cpu_prefix = "helper_cpu_us.";
// What the OS charged capture helpers (their own CPU and their workers'), counted as each ends.
inline constexpr const char* helper_cpu_os_us = "helper_cpu_os_us";
// Remote tier (hits are hit_remote above); see docs/remote.md.
inline constexpr const char* remote_miss = "remote_misses";
inline constexpr const char* remote_store = "remote_stores";
inline constexpr const char* remote_error = "remote_errors";      // refused, reset, error reply, bad credentials
inline constexpr const char* remote_timeout = "remote_timeouts";  // connect or command over its bound
inline constexpr const char* remote_skipped = "remote_skipped";   // not asked: backing off or off
inline constexpr const char* remote_hmac_reject = "remote_hmac_rejects";
inline constexpr const char* remote_corrupt = "remote_corrupt";
inline constexpr const char* remote_lease_wait = "remote_lease_waits";        // waited for another node's build
inline constexpr const char* remote_lease_timeout = "remote_lease_timeouts";  // ... and gave up, built here
inline constexpr const char* remote_inputs_sent = "remote_inputs_sent";           // input records published
inline constexpr const char* remote_inputs_there = "remote_inputs_already_there";  // ... not re-sent
inline constexpr const char* remote_backfill = "remote_backfills";  // a later remote's hit written to an earlier one
}  // namespace counter

using CounterMap = std::map<std::string, std::int64_t>;

void count(const std::string& name, std::int64_t amount = 1);

// Adds this process's pending counts to <root>/stats.json and clears them. Returns false (and
// keeps the counts) when the file cannot be locked within `wait` or written.
bool flush_stats(const std::filesystem::path& root, std::chrono::milliseconds wait = std::chrono::seconds(10));

CounterMap read_stats(const std::filesystem::path& root);
bool zero_stats(const std::filesystem::path& root);

}  // namespace jitcache
