// Rewrites entries of a loaded module's import address table (IAT): the module's calls to an
// imported function then land on a replacement, without touching the exporting DLL.
#pragma once

#include <windows.h>

#include <span>
#include <string_view>

namespace jitcache::windows {

struct Replacement {
  const char* name;  // exported function name
  void* function;    // what the module calls instead
};

// Patches, in `module`, the imports by name from the DLL called `dll_name` (case-insensitive,
// e.g. "OpenCL.dll") that appear in `replacements`. Returns how many entries were rewritten.
int patch_imports(HMODULE module, std::string_view dll_name, std::span<const Replacement> replacements);

}  // namespace jitcache::windows
