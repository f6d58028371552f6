// Readable facts about one cache entry, shared by `ls` and `show`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/local/disk_store.hpp"

namespace jitcache::tool {

// "opencl source", from the sidecar.
std::string entry_kind(const nlohmann::json& sidecar);
// "vector_add, saxpy" (kernel names, or "?" when the sidecar has none).
std::string entry_kernels(const nlohmann::json& sidecar, std::size_t max_chars = 40);
// The entry's human name (JITCACHE_LABEL when it was built), or "".
std::string entry_label(const nlohmann::json& sidecar);
// The JSON object `ls --json` prints per entry (docs/cli.md).
nlohmann::json entry_summary_json(const EntryInfo& entry, std::int64_t hits);

}  // namespace jitcache::tool
