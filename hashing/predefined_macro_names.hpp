// Names an OpenCL compiler may define as macros before it reads the program: reserved names, the
// OpenCL C spec's predefined and header macros, and what PoCL adds (-Dinline=, builtin renames).
// A computed #include whose expansion looks such a name up cannot be resolved by the scan
// exactly (include_macros.cpp), since the compiler's value is not one the scan can see.
#pragma once

#include <string_view>

namespace jitcache {

bool compiler_may_predefine(std::string_view name);

}  // namespace jitcache
