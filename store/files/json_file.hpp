// Small JSON files beside the store (stats, entry hits, traces): the one bounded reader of a file
// someone else may have written, and the one atomic writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hashing/bounded_json.hpp"

namespace jitcache {

// The parsed object, or nothing when the file cannot be read safely (no-follow, non-blocking,
// regular files only, at most `max_bytes`: a FIFO or a huge file is never waited on) or is not a
// JSON object within hashing/bounded_json.hpp's bounds.
std::optional<nlohmann::json> read_json_object(const std::filesystem::path& file,
                                               std::uint64_t max_bytes = kMaxJsonBytes);

// Its integer members by name (counter files); empty when it cannot be read.
std::map<std::string, std::int64_t> read_integer_members(const std::filesystem::path& file, std::uint64_t max_bytes);

// `bytes` as the whole file, or unchanged: written to "<file>.<pid>.tmp" (exclusively created,
// 0600, never through a link; a crashed earlier process's file of that name removed first), then
// renamed over it, so a reader never sees half of it. false when any step failed.
bool write_file_atomically(const std::filesystem::path& file, std::string_view bytes);

}  // namespace jitcache
