// Finds the headers a source includes, recursively, resolved the way a compiler would:
// "quoted" includes first next to the including file, then -I directories in order, then the
// working directory; <angled> includes through -I directories then the working directory.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hashing/build_inputs.hpp"

namespace jitcache {

// -I dirs from build options, both "-I dir" and "-Idir" forms, quoted paths honoured.
std::vector<std::filesystem::path> include_dirs_from_options(std::string_view options);

// False only when no directive in `source` can be an #include (then scan_includes finds nothing).
bool may_include(std::string_view source);

// Scans `source` (the program text itself lives in the working directory for resolution
// purposes). Each distinct resolved header appears once; cycles terminate; unresolvable ones are
// recorded with found = false. Order is deterministic (first-seen order).
std::vector<HeaderDependency> scan_includes(std::string_view source,
                                            const std::vector<std::filesystem::path>& include_dirs,
                                            const std::filesystem::path& working_dir);

}  // namespace jitcache
