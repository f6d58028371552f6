// How `jitcache run` gets the cache into an app: find libjitcache.so, then decide which
// environment variables inject it. The choice lives in plan_injection() alone, so another
// mechanism (an OpenCL ICD layer through OPENCL_LAYERS) can take over in one place.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jitcache::tool {

// Where libjitcache.so is looked for, in order (the first existing file wins):
//   1. $JITCACHE_LIBRARY, when set (an explicit choice; an error when it does not exist)
//   2. <tool dir>/libjitcache.so                 (copied next to the tool)
//   3. <tool dir>/../shim/libjitcache.so         (the build tree: build/tools/jitcache)
//   4. <tool dir>/../<libdir>/libjitcache.so     (installed: <prefix>/bin -> <prefix>/lib...)
std::vector<std::filesystem::path> library_candidates(const std::filesystem::path& tool_dir);

struct LibraryLookup {
  std::optional<std::filesystem::path> found;
  std::vector<std::filesystem::path> tried;  // for the error message
  std::string error;
};
LibraryLookup find_shim_library(const std::filesystem::path& tool_dir);

// The variables to set in the app's environment.
struct InjectionPlan {
  std::vector<std::pair<std::string, std::string>> env;
};

// LD_PRELOAD gets the library appended to what is already there (kept, and not repeated).
InjectionPlan plan_injection(const std::filesystem::path& library, const char* current_ld_preload);

// Directory of the running executable (/proc/self/exe).
std::filesystem::path tool_directory();

}  // namespace jitcache::tool
