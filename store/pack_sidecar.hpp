// What a hit parses of an entry's sidecar. A pack hit parses only the fields a hit reads
// (kHitFields); the disk store's hit path (store/entry_check.cpp) leaves out the key's components
// (the recorded program inputs and the inlined source, most of a real sidecar's bytes), which
// only the tools read; they parse the sidecar whole. Built into jitcache_store for that reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::pack {

// The sidecar fields a hit needs: the integrity checks (key, binary_size, binary_xxh3_64) and what
// a hit answers from: `answers` (core/engine.cpp answers_of, shim/opencl/recorded_answers.cpp,
// shim/level_zero/recorded_build_log.cpp), `build_log` (core/engine.cpp recorded_build_log),
// `compile_time_us` (the saved-time counters), `captured_after_use` (shim/opencl/entry_refresh.cpp).
// A field a hit starts to read must be added here (PackTest.AHitParsesOnlyTheFieldsAHitReads).
inline const std::vector<std::string_view> kHitFields = {
    "key", "binary_size", "binary_xxh3_64", "answers", "build_log", "compile_time_us", "captured_after_use"};

// `text` (a JSON object) reduced to its top-level fields named in `names` (their text copied as it
// is), or nullopt when the text is not shaped so that every value's end can be found, or names a
// field twice (the caller then parses the text whole). Only brackets and strings are followed to
// find a value's end; the values themselves are left for the JSON parser to check.
std::optional<std::string> only_top_level_values(std::string_view text, const std::vector<std::string_view>& names);

// `text` with the value of its top-level field `name` replaced by null (the disk store's hit path
// reads "components" as null), under the same rules as only_top_level_values.
std::optional<std::string> without_top_level_value(std::string_view text, std::string_view name);

}  // namespace jitcache::pack
