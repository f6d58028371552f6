#include "store/files/json_file.hpp"

#include "store/files/atomic_file.hpp"
#include "store/files/file_ops.hpp"

namespace jitcache {

std::optional<nlohmann::json> read_json_object(const std::filesystem::path& file, std::uint64_t max_bytes) {
  fileops::File opened;
  std::string text;
  if (fileops::File::open_read(file, &opened) || opened.read_all(&text, max_bytes)) return std::nullopt;
  nlohmann::json parsed = parse_untrusted_json(text);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

std::map<std::string, std::int64_t> read_integer_members(const std::filesystem::path& file, std::uint64_t max_bytes) {
  std::map<std::string, std::int64_t> members;
  const std::optional<nlohmann::json> object = read_json_object(file, max_bytes);
  if (!object) return members;
  for (const auto& [name, value] : object->items()) {
    if (value.is_number_integer()) members[name] = value.get<std::int64_t>();
  }
  return members;
}

bool write_file_atomically(const std::filesystem::path& file, std::string_view bytes) {
  std::filesystem::path tmp = file;
  tmp += "." + std::to_string(fileops::current_process_id()) + ".tmp";
  (void)fileops::remove_file(tmp);  // one this process left when it was killed
  fileops::AtomicFile out;
  return !out.write(tmp, bytes) && !out.commit(file);
}

}  // namespace jitcache
