#include "capture/helper_environment.hpp"

#include <array>

namespace jitcache {
namespace {

// Exact names: where things are (PATH for the tools a driver runs, HOME and XDG_CACHE_HOME for the
// default cache root, TMPDIR for scratch folders), the loader's library path, the locale (LC_*).
constexpr std::array<std::string_view, 6> kNames = {"PATH", "HOME", "TMPDIR", "XDG_CACHE_HOME", "LD_LIBRARY_PATH", "LANG"};

// Prefixes: jitcache's settings (the helper stores as the app's process would, remote credentials
// included), then the ICD loaders' and drivers' own variables, which decide which devices exist
// and how they compile (a keyed variable the helper lacks only makes its key differ: nothing is
// stored), then the sanitizer runtimes' options (the sanitizer builds).
constexpr std::array<std::string_view, 22> kPrefixes = {
    "JITCACHE_", "OCL_ICD_", "OPENCL_", "POCL_", "RUSTICL_", "MESA_", "LP_",    "GALLIUM_",
    "CLOVER_",   "ZE_",      "NEO",     "IGC_",  "CUDA_",    "AMD_",  "GPU_",   "HSA_",
    "ROC",       "LC_",      "ASAN_",   "UBSAN_", "LSAN_",   "TSAN_"};

// Never, whatever the prefix: the helper must not run under the shim.
constexpr std::array<std::string_view, 2> kDropped = {"LD_PRELOAD", "OPENCL_LAYERS"};

}  // namespace

bool helper_keeps_variable(std::string_view name) {
  for (std::string_view dropped : kDropped) {
    if (name == dropped) return false;
  }
  for (std::string_view kept : kNames) {
    if (name == kept) return true;
  }
  for (std::string_view prefix : kPrefixes) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

std::vector<std::string> helper_environment(char** environment) {
  std::vector<std::string> out;
  for (char** variable = environment; variable && *variable; ++variable) {
    const std::string_view text(*variable);
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    if (helper_keeps_variable(text.substr(0, equals))) out.emplace_back(text);
  }
  return out;
}

}  // namespace jitcache
