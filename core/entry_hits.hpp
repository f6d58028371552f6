// Per-entry hit counts, for `jitcache ls --sort hits`. Kept apart from the sidecars (a hit must not
// rewrite the entry) in <root>/entry_hits.json: every process counts in memory and merges its
// counts under <root>/entry_hits.lock when it flushes, like the stats counters.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>

namespace jitcache {

using EntryHits = std::map<std::string, std::int64_t>;  // key hex -> hits

void count_entry_hit(const std::string& key_hex);

// Merges this process's pending hits into the file. False (counts kept) when it cannot.
bool flush_entry_hits(const std::filesystem::path& root, std::chrono::milliseconds wait = std::chrono::seconds(2));

EntryHits read_entry_hits(const std::filesystem::path& root);

// Drops the counts of keys that are not in `live` (entries evicted or cleared).
bool prune_entry_hits(const std::filesystem::path& root, const std::set<std::string>& live);

}  // namespace jitcache
