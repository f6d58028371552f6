// The one way to parse JSON that came from outside the process (sidecars on disk or inside a
// Redis record, traces, stats files): bounded in size and nesting depth before nlohmann sees it,
// because a document nested thousands deep overflows the stack of whatever walks it (dump,
// compare, copy) and a huge one costs unbounded memory. Never throws.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace jitcache {

// Far above anything jitcache writes (a sidecar or trace nests about 6 deep, is a few KiB plus an
// inlined small source), far below what hurts.
inline constexpr std::size_t kMaxJsonDepth = 64;
inline constexpr std::size_t kMaxJsonBytes = 16u << 20;

// The deepest nesting of arrays and objects in `text` (strings skipped), counted without parsing;
// stops counting once `limit` is exceeded.
std::size_t json_nesting_depth(std::string_view text, std::size_t limit);

// A discarded value (is_discarded()) when `text` is larger than `max_bytes`, nests deeper than
// `max_depth`, or is not valid JSON; else the parsed document.
nlohmann::json parse_untrusted_json(std::string_view text, std::size_t max_bytes = kMaxJsonBytes,
                                    std::size_t max_depth = kMaxJsonDepth);

// The string member `name` of `object`; empty when `object` is no object or the member is absent
// or not a string (what a field of an untrusted document reads as when it is not what we wrote).
std::string string_member(const nlohmann::json& object, const char* name);

}  // namespace jitcache
