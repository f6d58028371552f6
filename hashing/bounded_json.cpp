#include "hashing/bounded_json.hpp"

namespace jitcache {

std::size_t json_nesting_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // skip the escaped character, whatever it is
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_untrusted_json(std::string_view text, std::size_t max_bytes, std::size_t max_depth) {
  if (text.size() > max_bytes || json_nesting_depth(text, max_depth) > max_depth) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  try {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  } catch (...) {  // allocation failure: hostile input degrades like invalid input
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

std::string string_member(const nlohmann::json& object, const char* name) {
  if (!object.is_object()) return {};
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace jitcache
