#include "tools/lib/json_file.hpp"

#include <string>

#include "hashing/bounded_json.hpp"
#include "store/file_ops.hpp"

namespace jitcache::tool {

std::optional<nlohmann::json> read_json_object(const std::filesystem::path& file) {
  fileops::File opened;
  std::string text;
  if (fileops::File::open_read(file, &opened) || opened.read_all(&text, kMaxJsonBytes)) return std::nullopt;
  nlohmann::json parsed = parse_untrusted_json(text);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

}  // namespace jitcache::tool
