// PoCL's own cache folder, found from the environment as PoCL finds it (pocl_cache_init_topdir,
// 3.1). The driver-quirk code loads binaries into scratch folders beside PoCL's own, and a capture
// helper builds in the app's kernel cache (docs/decisions/capture.md, "Capture outside the app").
#pragma once

#include <filesystem>

namespace jitcache::opencl {

// PoCL's pocl_get_bool_option: unset means its default (on), set means on only when it starts with '1'.
bool pocl_kernel_cache_off();

// POCL_CACHE_DIR, else <XDG_CACHE_HOME or ~/.cache>/pocl/kcache (pocl/uncached with the kernel
// cache off), else /tmp/pocl/...: where PoCL keeps the programs it builds, or with its cache off
// makes the scratch folders of its programs.
std::filesystem::path pocl_cache_folder();

}  // namespace jitcache::opencl
