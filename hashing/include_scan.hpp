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

// False only when nothing in `source` can name a header: no #include (also spelled %:include or
// ??=include) and no __has_include (then scan_includes finds nothing).
bool may_include(std::string_view source);

// What a compiler's command line adds to the include search: -I dirs, -include files, and the
// first option that changes the search in a way the scan does not model (-isystem, -iquote,
// -imacros, --include-directory...) or text it cannot split (an unclosed quote).
struct IncludeOptions {
  std::vector<std::filesystem::path> dirs;
  std::vector<std::string> forced_includes;  // -include FILE, in order
  std::vector<std::string> texts;            // the option strings read, in order (their -D/-U count)
  std::string not_understood;                // non-empty: the scan cannot be exact; this is why
};
IncludeOptions include_options(std::string_view options);

// The scan's complete answer. `unresolved` is non-empty when the scan could not follow every
// header exactly (a computed #include NAME that include_macros.hpp cannot expand exactly,
// __has_include(NAME), #include_next, a chain deeper or wider than the bounds): such a build must
// not be cached, since the key might miss an input. `macro_options`: the option strings whose
// -D/-U the compiler applies (the app's, then driver flags), for computed includes.
struct IncludeScan {
  std::vector<HeaderDependency> headers;
  std::string unresolved;
};
IncludeScan scan_program_includes(std::string_view source, const std::vector<std::filesystem::path>& include_dirs,
                                  const std::vector<std::string>& forced_includes,
                                  const std::filesystem::path& working_dir,
                                  const std::vector<std::string>& macro_options = {});

// Scans `source` (the program text itself lives in the working directory for resolution
// purposes). Each distinct resolved header appears once; cycles terminate; unresolvable ones are
// recorded with found = false. Order is deterministic (first-seen order). When the scan is cut
// short the last entry is a "<include scan truncated>" marker (scan_program_includes says why).
std::vector<HeaderDependency> scan_includes(std::string_view source,
                                            const std::vector<std::filesystem::path>& include_dirs,
                                            const std::filesystem::path& working_dir);

}  // namespace jitcache
