// BinaryCacheTrace: one JSON file per lookup (format in docs/trace-format.md).
//
// Traces inline kernel sources and key components, so they are private like the store: the trace
// folder is created 0700, must be a real folder (not a symlink) owned by the user and writable by
// nobody else, or no trace is written (one warning); files are created exclusively, never through
// a symlink, 0600. Retention keeps the folder bounded by count, bytes and age.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "hashing/build_inputs.hpp"

namespace jitcache {

inline constexpr int kTraceSchemaVersion = 1;

struct TraceRetention {
  std::uint64_t max_files = 0;  // trace records kept (0: no bound)
  std::uint64_t max_bytes = 0;  // bytes of records and input copies kept (0: no bound)
  std::uint64_t max_age_s = 0;  // older files are removed (0: no bound)
};

// Writes `record` as <dir>/<time>-<pid>-<seq>.json. When the program input is too large to sit in
// the record by value, one deduplicated copy goes to <dir>/inputs/<digest> and the record names
// it as "input_copy". Now and then prunes the folder to `retention`. Returns the trace file's
// path, or empty on failure (a refused folder is warned about once per process).
std::filesystem::path write_trace(const std::filesystem::path& dir, nlohmann::json record,
                                  const ProgramInputs* program, const TraceRetention& retention = {});

// Empty when `dir` may hold traces (a folder, not a symlink, owned by the user, writable by nobody
// else); otherwise why not. A missing folder is fine.
std::string trace_dir_problem(const std::filesystem::path& dir);

// The trace records in `dir` (regular files, listed and checked without following symlinks),
// sorted by name, which starts with the record's UTC time: newest last. None when
// trace_dir_problem() refuses the folder; then `problem` says why (a missing folder is no problem).
std::vector<std::filesystem::path> trace_records(const std::filesystem::path& dir, std::string* problem);

struct TraceUsage {
  std::uint64_t files = 0;  // trace records
  std::uint64_t bytes = 0;  // records + input copies
};
TraceUsage trace_usage(const std::filesystem::path& dir);

// Removes what retention does not keep, oldest first. Returns what was removed.
TraceUsage prune_traces(const std::filesystem::path& dir, const TraceRetention& retention);

// Removes every trace record, input copy and leftover temporary file (not the folder itself, and
// nothing else in it). Refuses a folder trace_dir_problem() rejects. Returns what was removed.
TraceUsage clear_traces(const std::filesystem::path& dir, std::string* error);

}  // namespace jitcache
