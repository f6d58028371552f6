// The OpenCL functions jitcache.dll takes over, by export name, pointing at the shared hooks.
#pragma once

#include <span>

#include "shim/windows/import_patcher.hpp"

namespace jitcache::windows {

std::span<const Replacement> opencl_replacements();
// The hook for an OpenCL export name, or nullptr when jitcache does not hook it.
void* opencl_hook_for(const char* name);

}  // namespace jitcache::windows
