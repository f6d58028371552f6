#include "store/local/pack_sidecar.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "hashing/bounded_json.hpp"

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

// A container's bytes are read 64 at a time as bit masks (bit i for byte i), so that the walk
// visits only the brackets outside strings: most of a sidecar is small objects of short strings
// (the components, the answers), too dense for a byte-by-byte scan or memchr to be cheap.
struct BlockMasks {
  std::uint64_t quote = 0, backslash = 0, open = 0, close = 0;
};

BlockMasks masks_of(const char* block) {
  BlockMasks masks;
#if defined(__SSE2__)
  const __m128i case_bit = _mm_set1_epi8(0x20);  // '[' | 0x20 == '{', ']' | 0x20 == '}'
  for (int part = 0; part < 4; ++part) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * part));
    const __m128i folded = _mm_or_si128(bytes, case_bit);
    auto mask = [&](__m128i same) {
      return static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(same))) << (16 * part);
    };
    masks.quote |= mask(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')));
    masks.backslash |= mask(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\')));
    masks.open |= mask(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')));
    masks.close |= mask(_mm_cmpeq_epi8(folded, _mm_set1_epi8('}')));
  }
#else
  for (int i = 0; i < 64; ++i) {
    const char c = block[i];
    const std::uint64_t bit = std::uint64_t{1} << i;
    if (c == '"') masks.quote |= bit;
    if (c == '\\') masks.backslash |= bit;
    if (c == '{' || c == '[') masks.open |= bit;
    if (c == '}' || c == ']') masks.close |= bit;
  }
#endif
  return masks;
}

// Bit i set when an odd number of `bits` at or below i are set: with the quotes' mask, the bytes
// from an opening quote up to (not including) its closing one.
std::uint64_t prefix_xor(std::uint64_t bits) {
  for (int shift = 1; shift < 64; shift *= 2) bits ^= bits << shift;
  return bits;
}

// What a container's scan carries from one block to the next.
struct ScanState {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;  // the block's first byte follows an unescaped backslash
};

// The offset after the closing bracket in this block, or -1. A backslash escapes the byte after it
// (backslashes are rare: walked one by one).
int scan_block(const char* block, ScanState* state) {
  const BlockMasks masks = masks_of(block);
  std::uint64_t escaped = state->escaped ? 1 : 0;
  state->escaped = false;
  for (std::uint64_t backslashes = masks.backslash; backslashes != 0; backslashes &= backslashes - 1) {
    const int bit = __builtin_ctzll(backslashes);
    if ((escaped >> bit) & 1) continue;
    if (bit == 63) state->escaped = true;
    else escaped |= std::uint64_t{2} << bit;
  }
  const std::uint64_t inside = prefix_xor(masks.quote & ~escaped) ^ (state->in_string ? ~std::uint64_t{0} : 0);
  state->in_string = (inside >> 63) != 0;
  const std::uint64_t outside = ~inside & ~escaped;
  const std::uint64_t opens = masks.open & outside;
  for (std::uint64_t brackets = (masks.open | masks.close) & outside; brackets != 0; brackets &= brackets - 1) {
    const int bit = __builtin_ctzll(brackets);
    if ((opens >> bit) & 1) ++state->depth;
    else if (--state->depth == 0) return bit + 1;
  }
  return -1;
}

// The position after the object or array that opens at `at`, or kNotFound.
std::size_t container_end(std::string_view text, std::size_t at) {
  ScanState state;
  for (std::size_t block = at; block < text.size(); block += 64) {
    const char* bytes = text.data() + block;
    char last[64] = {};  // the last, partial block, padded with bytes that mean nothing here
    if (text.size() - block < 64) bytes = static_cast<const char*>(std::memcpy(last, bytes, text.size() - block));
    if (const int end = scan_block(bytes, &state); end >= 0) return block + static_cast<std::size_t>(end);
  }
  return kNotFound;
}

// The position after the value that starts at `at`, or kNotFound.
std::size_t value_end(std::string_view text, std::size_t at) {
  if (at >= text.size()) return kNotFound;
  if (text[at] == '"') return string_end(text, at);
  if (text[at] == '{' || text[at] == '[') return container_end(text, at);
  std::size_t i = at;  // a number, true, false or null
  while (i < text.size() && text[i] != ',' && text[i] != '}' && !space(text[i])) ++i;
  return i == at ? kNotFound : i;
}

enum class Field { drop, keep, as_null, as_text };

// One top-level field that is kept: its name, its whole text from the name's opening quote to the
// value's end, and its value's text.
struct Member {
  std::string_view name, whole, value;
  Field field;
};
struct Selection {
  std::vector<Member> kept;
  std::shared_ptr<const std::string> as_text;
};

// The top-level fields of `text`, each kept, dropped, kept with a null value or cut out as its
// text as `keep(name)` says, or nullopt when the text is not shaped so that every value's end can
// be found, names a field it keeps twice, or has a name with an escape in it (the parser's rule
// decides then, on the whole text).
template <typename Keep>
std::optional<Selection> select_top_level_values(std::string_view text, Keep keep) {
  std::size_t at = skip_space(text, 0);
  if (at >= text.size() || text[at] != '{') return std::nullopt;
  Selection selection;
  at = skip_space(text, at + 1);
  if (at < text.size() && text[at] == '}') {
    return skip_space(text, at + 1) == text.size() ? std::optional(selection) : std::nullopt;
  }
  while (at < text.size() && text[at] == '"') {  // "key" : value , ...
    const std::size_t key_end = string_end(text, at);
    if (key_end == kNotFound) return std::nullopt;
    const std::string_view key = text.substr(at + 1, key_end - at - 2);
    if (key.find('\\') != std::string_view::npos) return std::nullopt;
    std::size_t colon = skip_space(text, key_end);
    if (colon >= text.size() || text[colon] != ':') return std::nullopt;
    const std::size_t start = skip_space(text, colon + 1);
    const std::size_t end = value_end(text, start);
    if (end == kNotFound) return std::nullopt;
    if (const Field field = keep(key); field != Field::drop) {
      const auto same_name = [&](const Member& member) { return member.name == key; };
      if (std::any_of(selection.kept.begin(), selection.kept.end(), same_name)) return std::nullopt;
      if (field == Field::as_text) {
        selection.as_text = std::make_shared<const std::string>(text.substr(start, end - start));
      }
      selection.kept.push_back({key, text.substr(at, end - at), text.substr(start, end - start), field});
    }
    at = skip_space(text, end);
    if (at < text.size() && text[at] == '}') {
      if (skip_space(text, at + 1) != text.size()) return std::nullopt;
      return selection;
    }
    if (at >= text.size() || text[at] != ',') return std::nullopt;
    at = skip_space(text, at + 1);
  }
  return std::nullopt;
}

// A value's text as JSON. The common shapes (a string of printable ASCII without escapes, an
// unsigned integer) are read directly, as the parser would read them; anything else goes to the
// parser, bounded one level less deep than the document (discarded when it is not valid JSON).
nlohmann::json value_of(std::string_view value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    const std::string_view inner = value.substr(1, value.size() - 2);
    const auto plain = [](char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; };
    if (std::all_of(inner.begin(), inner.end(), plain)) return std::string(inner);
  }
  const bool digits = !value.empty() && value.size() <= 19 && std::all_of(value.begin(), value.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (digits && (value[0] != '0' || value.size() == 1)) {
    std::uint64_t number = 0;
    std::from_chars(value.data(), value.data() + value.size(), number);
    return number;
  }
  return parse_untrusted_json(value, kMaxJsonBytes, kMaxJsonDepth - 1);
}

std::optional<HitFields> tree_of(std::optional<Selection> selection) {
  if (!selection) return std::nullopt;
  HitFields split;
  split.fields = nlohmann::json::object();
  for (const Member& member : selection->kept) {
    if (member.field == Field::as_text) continue;
    nlohmann::json value = member.field == Field::as_null ? nlohmann::json() : value_of(member.value);
    if (value.is_discarded()) {
      split.fields = value;
      break;
    }
    split.fields.emplace(std::string(member.name), std::move(value));
  }
  split.as_text = std::move(selection->as_text);
  return split;
}

// Keeps the fields named in `names`, cuts out the one named `as_text` (if any), drops the rest.
auto keep_named(const std::vector<std::string_view>& names, std::string_view as_text) {
  return [&names, as_text](std::string_view key) {
    if (!as_text.empty() && key == as_text) return Field::as_text;
    return std::find(names.begin(), names.end(), key) != names.end() ? Field::keep : Field::drop;
  };
}

}  // namespace

std::optional<HitFields> hit_fields(std::string_view text, const std::vector<std::string_view>& names,
                                    std::string_view as_text) {
  return tree_of(select_top_level_values(text, keep_named(names, as_text)));
}

std::optional<HitFields> all_but(std::string_view text, std::string_view as_null, std::string_view as_text) {
  return tree_of(select_top_level_values(text, [&](std::string_view key) {
    return key == as_null ? Field::as_null : key == as_text ? Field::as_text : Field::keep;
  }));
}

std::optional<std::string> only_top_level_values(std::string_view text, const std::vector<std::string_view>& names) {
  const std::optional<Selection> selection = select_top_level_values(text, keep_named(names, {}));
  if (!selection) return std::nullopt;
  std::string out = "{";
  for (const Member& member : selection->kept) {
    if (out.size() > 1) out += ',';
    out.append(member.whole);
  }
  return out + "}";
}

}  // namespace jitcache::pack
