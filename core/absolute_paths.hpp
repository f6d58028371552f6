// Paths in settings are made absolute once, against the working directory the process started in:
// an app that changes directory keeps its cache, traces, packs and keys, and the
// capture helpers it starts (which inherit its environment) get the same absolute paths.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace jitcache {

// The path variables (JITCACHE_DIR, JITCACHE_TRACE_DIR, JITCACHE_PACKS, JITCACHE_PACK_KEYS)
// rewritten in this process's environment where they hold relative paths. Called by the shim at
// load time (before the app runs) and by the tool at its start (after --dir). POSIX only.
void make_path_variables_absolute();

// `value` with every relative entry made absolute against `base`; `list`: entries are
// ':'-separated (JITCACHE_PACKS), else the whole value is one path.
std::string absolute_paths(std::string_view value, const std::filesystem::path& base, bool list);

}  // namespace jitcache
