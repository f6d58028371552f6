#include "store/pack_sidecar.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace jitcache::pack {
namespace {

constexpr std::size_t kNotFound = std::string_view::npos;

bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::size_t skip_space(std::string_view text, std::size_t at) {
  while (at < text.size() && space(text[at])) ++at;
  return at;
}

// The position after the string that opens at `at` (text[at] == '"'), or kNotFound. Most of a
// sidecar's bytes are in strings (hex answers, paths): memchr jumps to each quote, and a quote ends
// the string unless an odd run of backslashes precedes it (each run is counted once: linear).
std::size_t string_end(std::string_view text, std::size_t at) {
  for (std::size_t from = at + 1; from < text.size();) {
    const void* found = std::memchr(text.data() + from, '"', text.size() - from);
    if (!found) return kNotFound;
    const std::size_t quote = static_cast<std::size_t>(static_cast<const char*>(found) - text.data());
    std::size_t backslashes = 0;
    while (quote - backslashes > at + 1 && text[quote - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote + 1;
    from = quote + 1;
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

enum class Field { drop, keep, as_null, as_text };

// The top-level fields of `text`, each kept, dropped, kept with a null value or cut out as its
// text (HitFieldsText::as_text) as `keep(name)` says, or nullopt when the text is not shaped so that
// every value's end can be found, or names a field it keeps twice.
template <typename Keep>
std::optional<HitFieldsText> select_top_level_values(std::string_view text, Keep keep) {
  std::size_t at = skip_space(text, 0);
  if (at >= text.size() || text[at] != '{') return std::nullopt;
  HitFieldsText split;
  std::string& out = split.fields;
  out = "{";
  std::vector<std::string_view> kept;
  at = skip_space(text, at + 1);
  if (at < text.size() && text[at] == '}') return HitFieldsText{"{}", nullptr};
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
      if (field == Field::as_text) {
        split.as_text = std::make_shared<const std::string>(text.substr(start, end - start));
      } else {
        if (out.size() > 1) out += ',';
        if (field == Field::keep) {
          out.append(text.substr(at, end - at));
        } else {
          out.append(text.substr(at, start - at)).append("null");
        }
      }
    }
    at = skip_space(text, end);
    if (at < text.size() && text[at] == '}') {
      if (skip_space(text, at + 1) != text.size()) return std::nullopt;
      out += '}';
      return split;
    }
    if (at >= text.size() || text[at] != ',') return std::nullopt;
    at = skip_space(text, at + 1);
  }
  return std::nullopt;
}

std::optional<std::string> fields_of(std::optional<HitFieldsText> split) {
  if (!split) return std::nullopt;
  return std::move(split->fields);
}

}  // namespace

std::optional<HitFieldsText> hit_fields_text(std::string_view text, const std::vector<std::string_view>& names,
                                             std::string_view as_text) {
  return select_top_level_values(text, [&](std::string_view key) {
    if (!as_text.empty() && key == as_text) return Field::as_text;
    return std::find(names.begin(), names.end(), key) != names.end() ? Field::keep : Field::drop;
  });
}

std::optional<HitFieldsText> all_but_text(std::string_view text, std::string_view as_null, std::string_view as_text) {
  return select_top_level_values(text, [&](std::string_view key) {
    return key == as_null ? Field::as_null : key == as_text ? Field::as_text : Field::keep;
  });
}

std::optional<std::string> only_top_level_values(std::string_view text, const std::vector<std::string_view>& names) {
  return fields_of(hit_fields_text(text, names, {}));
}

std::optional<std::string> without_top_level_value(std::string_view text, std::string_view name) {
  return fields_of(all_but_text(text, name, {}));
}

}  // namespace jitcache::pack
