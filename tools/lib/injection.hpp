// How `jitcache run` gets the cache into an app: find libjitcache.so, then decide which
// environment variables inject it. LD_PRELOAD always (Level Zero, and OpenCL with loaders that
// have no layers); OPENCL_LAYERS too when the ICD loader supports layers, so OpenCL calls through
// dlopen'ed loaders are cached as well. With both, the layer owns the OpenCL hooks and the
// preloaded exports only forward (docs/opencl-coverage.md).
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
//   4. <tool dir>/../<libdir>/jitcache/libjitcache.so  (installed: <prefix>/bin -> <prefix>/lib...)
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
  std::string reason;  // why OPENCL_LAYERS is or is not set
};

// LD_PRELOAD gets the library appended to what is already there (kept, and not repeated);
// OPENCL_LAYERS gets it prepended when `opencl_loader` supports layers.
InjectionPlan plan_injection(const std::filesystem::path& library, const char* current_ld_preload,
                             const char* current_layers = nullptr,
                             const std::optional<std::filesystem::path>& opencl_loader = std::nullopt);

// Directory of the running executable (/proc/self/exe).
std::filesystem::path tool_directory();

}  // namespace jitcache::tool
