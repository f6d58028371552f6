#include "store/pack_sidecar.hpp"

#include <algorithm>

namespace jitcache::pack {
namespace {

constexpr std::size_t kNotFound = std::string_view::npos;

bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::size_t skip_space(std::string_view text, std::size_t at) {
  while (at < text.size() && space(text[at])) ++at;
  return at;
}

// The position after the string that opens at `at` (text[at] == '"'), or kNotFound.
std::size_t string_end(std::string_view text, std::size_t at) {
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\') ++i;
    else if (text[i] == '"') return i + 1;
  }
  return kNotFound;
}

// The position after the value that starts at `at`, or kNotFound.
std::size_t value_end(std::string_view text, std::size_t at) {
  if (at >= text.size()) return kNotFound;
  if (text[at] == '"') return string_end(text, at);
  if (text[at] == '{' || text[at] == '[') {
    std::size_t depth = 0;
    for (std::size_t i = at; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '"') {
        i = string_end(text, i);
        if (i == kNotFound) return kNotFound;
        --i;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        return i + 1;
      }
    }
    return kNotFound;
  }
  std::size_t i = at;  // a number, true, false or null
  while (i < text.size() && text[i] != ',' && text[i] != '}' && !space(text[i])) ++i;
  return i == at ? kNotFound : i;
}

enum class Field { drop, keep, as_null };

// The top-level fields of `text`, each kept, dropped or kept with a null value as `keep(name)`
// says, or nullopt when the text is not shaped so that every value's end can be found, or names a
// field it keeps twice.
template <typename Keep>
std::optional<std::string> select_top_level_values(std::string_view text, Keep keep) {
  std::size_t at = skip_space(text, 0);
  if (at >= text.size() || text[at] != '{') return std::nullopt;
  std::string out = "{";
  std::vector<std::string_view> kept;
  at = skip_space(text, at + 1);
  if (at < text.size() && text[at] == '}') return "{}";
  while (at < text.size() && text[at] == '"') {  // "key" : value , ...
    const std::size_t key_end = string_end(text, at);
    if (key_end == kNotFound) return std::nullopt;
    const std::string_view key = text.substr(at + 1, key_end - at - 2);
    std::size_t colon = skip_space(text, key_end);
    if (colon >= text.size() || text[colon] != ':') return std::nullopt;
    const std::size_t start = skip_space(text, colon + 1);
    const std::size_t end = value_end(text, start);
    if (end == kNotFound) return std::nullopt;
    if (const Field field = keep(key); field != Field::drop) {
      // A name twice: the parser's rule decides, on the whole text.
      if (std::find(kept.begin(), kept.end(), key) != kept.end()) return std::nullopt;
      kept.push_back(key);
      if (out.size() > 1) out += ',';
      if (field == Field::keep) {
        out.append(text.substr(at, end - at));
      } else {
        out.append(text.substr(at, start - at)).append("null");
      }
    }
    at = skip_space(text, end);
    if (at < text.size() && text[at] == '}') return skip_space(text, at + 1) == text.size() ? out + "}" : std::optional<std::string>();
    if (at >= text.size() || text[at] != ',') return std::nullopt;
    at = skip_space(text, at + 1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> only_top_level_values(std::string_view text, const std::vector<std::string_view>& names) {
  return select_top_level_values(text, [&](std::string_view key) {
    return std::find(names.begin(), names.end(), key) != names.end() ? Field::keep : Field::drop;
  });
}

std::optional<std::string> without_top_level_value(std::string_view text, std::string_view name) {
  return select_top_level_values(text, [&](std::string_view key) { return key == name ? Field::as_null : Field::keep; });
}

}  // namespace jitcache::pack
