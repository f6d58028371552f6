// Keeps the OpenCL hooks in place as the process changes: every module loaded later gets its
// import table patched, and GetProcAddress on OpenCL.dll hands out the hooks.
#pragma once

namespace jitcache::windows {

// Patches every module loaded now (OpenCL imports and the loader functions). Idempotent.
void patch_loaded_modules();

}  // namespace jitcache::windows
