// What a pack hit parses of an entry's sidecar. A hit needs the sidecar's checks (key, size,
// XXH3) and what the adapter answers from (answers, build_log, compile_time_us), not the key's
// components (the recorded program inputs, most of a real sidecar's bytes), which only the tools
// read: those are left out of the parse on the tier's path, and parsed whole when asked. The disk
// store's hit path uses it too (store/entry_check.hpp), which is why it is built into jitcache_store.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitcache::pack {

// `text` (a JSON object) with the value of its top-level field `name` replaced by null, or nullopt
// when the field is absent or the text is not shaped so that the value's end can be found (the
// caller then parses the text whole). Only brackets and strings are followed to find the value's
// end; the rest of the text is left for the JSON parser to check.
std::optional<std::string> without_top_level_value(std::string_view text, std::string_view name);

}  // namespace jitcache::pack
