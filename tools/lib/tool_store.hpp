// The store as the tool sees it: opened with the effective settings, read-only for commands that
// only look (so that looking never creates a cache directory), and entries found by key prefix.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/settings.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache::tool {

// nullptr and `error` set when the directory is unusable (wrong owner, permissions, not a dir).
// `create_root` false: a missing directory is an error (a helper serving an app's store).
std::unique_ptr<DiskStore> open_store(const Settings& settings, bool writable, std::string* error,
                                      bool create_root = true);
// For listing: writable when the settings allow and the directory exists, so that the listing
// writes the shard indexes it had to rebuild (store/local/shard_index.hpp); else read-only.
std::unique_ptr<DiskStore> open_store_to_list(const Settings& settings, std::string* error);

// The one entry whose key starts with `prefix` (at least 4 hex digits), its sidecar whole when the
// entry checks out (else its indexed summary). Errors: none, ambiguous.
std::optional<EntryInfo> find_entry(DiskStore& store, const std::string& prefix, std::string* error);

}  // namespace jitcache::tool
