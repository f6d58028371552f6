// BinaryCacheTrace: one JSON file per lookup (format in docs/trace-format.md).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "hashing/build_inputs.hpp"

namespace jitcache {

inline constexpr int kTraceSchemaVersion = 1;

// Writes `record` as <dir>/<time>-<pid>-<seq>.json. When the program input is too large to sit in
// the record by value, one deduplicated copy goes to <dir>/inputs/<digest> and the record names
// it as "input_copy". Returns the trace file's path, or empty on failure.
std::filesystem::path write_trace(const std::filesystem::path& dir, nlohmann::json record,
                                  const ProgramInputs* program);

}  // namespace jitcache
