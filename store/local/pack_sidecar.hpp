// What a hit parses of an entry's sidecar. A pack hit parses only the fields a hit reads
// (kHitFields); the disk store's hit path (store/local/entry_check.cpp) leaves out the key's components
// (the recorded program inputs and the inlined source, most of a real sidecar's bytes), which
// only the tools read; they parse the sidecar whole. Built into jitcache_store for that reason.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace jitcache::pack {

// The sidecar fields a hit needs: the integrity checks (key, binary_size, binary_xxh3_64) and what
// a hit answers from: `build_log` (core/engine.cpp recorded_build_log), `compile_time_us` (the
// saved-time counters), `captured_after_use` (shim/opencl/entry_refresh.cpp), and `answers`
// (kAnswersTextField). A field a hit starts to read must be added here
// (PackTest.AHitParsesOnlyTheFieldsAHitReads).
inline const std::vector<std::string_view> kHitFields = {
    "key", "binary_size", "binary_xxh3_64", "build_log", "compile_time_us", "captured_after_use"};
// The hit field passed on as its JSON text, unparsed: the adapter that recorded it decodes it
// (shim/opencl/recorded_answers.cpp, shim/level_zero/recorded_build_log.cpp) without building a
// JSON tree, which cost most of a hit (docs/design-decisions.md).
inline constexpr std::string_view kAnswersTextField = "answers";

// A sidecar read for a hit: the fields it keeps, parsed (discarded when one of their values is not
// valid JSON), and the text of the field named `as_text` (null when absent), unparsed.
struct HitFields {
  nlohmann::json fields;
  std::shared_ptr<const std::string> as_text;
};
// A pack hit: the fields named in `names` kept, the one named `as_text` cut out as its text; nullopt
// when the text is not shaped so that every value's end can be found, names a kept field (or
// `as_text`) twice or has a name with an escape in it: the caller then parses the text whole, and
// the parser's rules decide. Only brackets and strings are followed to find a value's end; the
// kept values themselves are parsed as the parser would (one by one: the common shapes directly).
std::optional<HitFields> hit_fields(std::string_view text, const std::vector<std::string_view>& names,
                                    std::string_view as_text);
// The disk store's hit: every field kept but `as_null` (its value read as null) and `as_text` (cut
// out as its text), under the same rules.
std::optional<HitFields> all_but(std::string_view text, std::string_view as_null, std::string_view as_text);

// `text` (a JSON object) reduced to the text of its top-level fields named in `names` (copied as
// they are), or nullopt under the rules of hit_fields.
std::optional<std::string> only_top_level_values(std::string_view text, const std::vector<std::string_view>& names);

}  // namespace jitcache::pack
