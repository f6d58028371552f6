#include "core/trace.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "core/clock.hpp"
#include "core/log.hpp"
#include "hashing/digest.hpp"
#include "store/files/file_ops.hpp"
#include "store/files/json_file.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

std::atomic<unsigned> g_sequence{0};
std::atomic<bool> g_refusal_warned{false};
// Pruning lists the folder: done on a process's first trace and then every kPruneEvery traces.
constexpr unsigned kPruneEvery = 32;

// "20261122T194901.123456" from the ISO time: sorts by time, safe in file names.
std::string timestamp_for_file_name() {
  std::string name;
  for (char c : iso8601_now()) {
    if (c != '-' && c != ':' && c != 'Z') name += c;
  }
  return name;
}

bool is_trace_name(const std::string& name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
}
bool is_temporary_name(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0;
}

// Creates the folder privately if missing, then checks it like the store checks its root.
bool usable_dir(const fs::path& dir) {
  std::string problem = trace_dir_problem(dir);  // first: a symlink is named as such
  if (problem.empty()) {
    if (std::error_code error = fileops::make_private_dirs(dir)) {
      problem = "cannot create " + dir.string() + ": " + error.message();
    } else {
      problem = trace_dir_problem(dir);
    }
  }
  if (problem.empty()) return true;
  if (!g_refusal_warned.exchange(true)) log_warning("traces are not written: " + problem);
  return false;
}

// The input by value only when it is small text; otherwise a content-addressed copy.
void attach_input_copy(const fs::path& dir, nlohmann::json& record, const ProgramInputs& program) {
  const nlohmann::json& input = record["components"]["input"]["value"];
  if (input.contains("text")) return;
  const fs::path inputs = dir / "inputs";
  if (!usable_dir(inputs)) return;
  const fs::path copy = inputs / xxh3_128(program.input).hex();
  fileops::FileInfo info;
  if (fileops::stat_nofollow(copy, &info) || info.kind == fileops::FileKind::missing) {
    if (!write_file_atomically(copy, program.input)) return;
  } else if (info.kind != fileops::FileKind::regular) {
    return;
  }
  record["input_copy"] = copy.string();
}

struct TraceFile {
  fs::path path;
  fileops::FileInfo info;
  bool record = false;  // a trace record (else an input copy or a leftover temporary file)
};

// Every file of the folder that traces made, oldest first; nothing else is ever touched.
std::vector<TraceFile> trace_files(const fs::path& dir) {
  std::vector<TraceFile> files;
  auto collect = [&](const fs::path& folder, bool inputs) {
    std::vector<fileops::DirEntry> entries;
    if (fileops::list_dir(folder, &entries)) return;
    for (const fileops::DirEntry& entry : entries) {
      const bool record = !inputs && is_trace_name(entry.name);
      if (!inputs && !record && !is_temporary_name(entry.name)) continue;
      TraceFile file{folder / entry.name, {}, record};
      if (fileops::stat_nofollow(file.path, &file.info) || file.info.kind != fileops::FileKind::regular) continue;
      files.push_back(std::move(file));
    }
  };
  collect(dir, false);
  fileops::FileInfo inputs;
  if (!fileops::stat_nofollow(dir / "inputs", &inputs) && inputs.kind == fileops::FileKind::directory) {
    collect(dir / "inputs", true);
  }
  std::sort(files.begin(), files.end(), [](const TraceFile& a, const TraceFile& b) {
    return a.info.mtime_ns != b.info.mtime_ns ? a.info.mtime_ns < b.info.mtime_ns : a.path < b.path;
  });
  return files;
}

}  // namespace

std::string trace_dir_problem(const fs::path& dir) {
  fileops::FileInfo info;
  if (std::error_code error = fileops::stat_nofollow(dir, &info)) {
    return "cannot inspect " + dir.string() + ": " + error.message();
  }
  if (info.kind == fileops::FileKind::missing) return {};
  if (info.kind == fileops::FileKind::symlink) return dir.string() + " is a symlink (fix: remove it)";
  if (info.kind != fileops::FileKind::directory) return dir.string() + " is not a folder";
#ifndef _WIN32
  if (info.owner != fileops::current_user()) {
    return dir.string() + " is owned by another user (fix: set trace_dir to a private folder)";
  }
  if (info.mode & 022) {
    return dir.string() + " is writable by other users (fix: remove it, or set trace_dir to a private folder)";
  }
#endif
  return {};
}

fs::path write_trace(const fs::path& dir, nlohmann::json record, const ProgramInputs* program,
                     const TraceRetention& retention) {
  try {
    if (!usable_dir(dir)) return {};
    record["format"] = "BinaryCacheTrace";
    record["trace_schema"] = kTraceSchemaVersion;
    if (program && record.contains("components")) attach_input_copy(dir, record, *program);
    const unsigned sequence = g_sequence++;
    fs::path file = dir / (timestamp_for_file_name() + "-" + std::to_string(fileops::current_process_id()) + "-" +
                           std::to_string(sequence) + ".json");
    if (!write_file_atomically(file, record.dump(2) + "\n")) return {};
    if (sequence % kPruneEvery == 0) prune_traces(dir, retention);
    return file;
  } catch (...) {
    return {};
  }
}

std::vector<fs::path> trace_records(const fs::path& dir, std::string* problem) {
  std::vector<fs::path> records;
  *problem = trace_dir_problem(dir);
  if (!problem->empty()) return records;
  for (const TraceFile& file : trace_files(dir)) {
    if (file.record) records.push_back(file.path);
  }
  std::sort(records.begin(), records.end());
  return records;
}

TraceUsage trace_usage(const fs::path& dir) {
  TraceUsage usage;
  for (const TraceFile& file : trace_files(dir)) {
    usage.files += file.record ? 1 : 0;
    usage.bytes += file.info.size;
  }
  return usage;
}

TraceUsage prune_traces(const fs::path& dir, const TraceRetention& retention) {
  TraceUsage removed;
  if (!trace_dir_problem(dir).empty()) return removed;
  std::vector<TraceFile> files = trace_files(dir);
  TraceUsage kept;
  for (const TraceFile& file : files) {
    kept.files += file.record ? 1 : 0;
    kept.bytes += file.info.size;
  }
  const std::int64_t now = fileops::now_ns();
  const std::int64_t max_age_ns =  // capped at ~136 years so that it cannot overflow
      static_cast<std::int64_t>(std::min<std::uint64_t>(retention.max_age_s, 1ull << 32)) * 1'000'000'000;
  for (const TraceFile& file : files) {  // oldest first
    const bool too_old = retention.max_age_s > 0 && now - file.info.mtime_ns > max_age_ns;
    const bool too_many = retention.max_files > 0 && kept.files > retention.max_files;
    const bool too_big = retention.max_bytes > 0 && kept.bytes > retention.max_bytes;
    if (!too_old && !too_many && !too_big) break;
    if (fileops::remove_file(file.path)) continue;
    kept.files -= file.record ? 1 : 0;
    kept.bytes -= file.info.size;
    removed.files += file.record ? 1 : 0;
    removed.bytes += file.info.size;
  }
  return removed;
}

TraceUsage clear_traces(const fs::path& dir, std::string* error) {
  TraceUsage removed;
  if (std::string problem = trace_dir_problem(dir); !problem.empty()) {
    *error = problem;
    return removed;
  }
  for (const TraceFile& file : trace_files(dir)) {
    if (fileops::remove_file(file.path)) continue;
    removed.files += file.record ? 1 : 0;
    removed.bytes += file.info.size;
  }
  return removed;
}

}  // namespace jitcache
