// Reads a JSON file someone else may have written (a trace, a sidecar): no-follow, non-blocking,
// regular files only, bounded in size and depth (hashing/bounded_json.hpp).
#pragma once

#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace jitcache::tool {

// The parsed object, or nothing when the file cannot be read safely or is not a JSON object.
std::optional<nlohmann::json> read_json_object(const std::filesystem::path& file);

}  // namespace jitcache::tool
