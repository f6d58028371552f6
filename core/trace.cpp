#include "core/trace.hpp"

#include <atomic>
#include <fstream>

#include "core/clock.hpp"
#include "hashing/digest.hpp"
#include "store/file_ops.hpp"

namespace jitcache {
namespace {

std::atomic<unsigned> g_sequence{0};

// "20261122T194901.123456" from the ISO time: sorts by time, safe in file names.
std::string timestamp_for_file_name() {
  std::string name;
  for (char c : iso8601_now()) {
    if (c != '-' && c != ':' && c != 'Z') name += c;
  }
  return name;
}

bool write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

// The input by value only when it is small text; otherwise a content-addressed copy.
void attach_input_copy(const std::filesystem::path& dir, nlohmann::json& record, const ProgramInputs& program) {
  const nlohmann::json& input = record["components"]["input"]["value"];
  if (input.contains("text")) return;
  std::string digest = xxh3_128(program.input).hex();
  std::filesystem::path copy = dir / "inputs" / digest;
  std::error_code ec;
  if (!std::filesystem::exists(copy, ec)) {
    std::filesystem::create_directories(copy.parent_path(), ec);
    if (!write_file(copy, program.input)) return;
  }
  record["input_copy"] = copy.string();
}

}  // namespace

std::filesystem::path write_trace(const std::filesystem::path& dir, nlohmann::json record,
                                  const ProgramInputs* program) {
  try {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    record["format"] = "BinaryCacheTrace";
    record["trace_schema"] = kTraceSchemaVersion;
    if (program && record.contains("components")) attach_input_copy(dir, record, *program);
    std::filesystem::path file = dir / (timestamp_for_file_name() + "-" + std::to_string(fileops::current_process_id()) + "-" +
                                        std::to_string(g_sequence++) + ".json");
    return write_file(file, record.dump(2) + "\n") ? file : std::filesystem::path();
  } catch (...) {
    return {};
  }
}

}  // namespace jitcache
