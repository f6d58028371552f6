// Which loaded libraries are Level Zero drivers. The loader hides its drivers behind its own
// handles, so a driver's library cannot be read off a handle as OpenCL's dispatch table allows.
#pragma once

#include <string>
#include <vector>

#include "shim/level_zero/next_functions.hpp"

namespace jitcache::level_zero {

// Paths of the loaded shared objects that define the DDI getter every driver exports
// (zeGetModuleProcAddrTable), other than the loader itself (the library of `loader`'s functions).
// Loaded Level Zero layers define it too and are included: keying on them costs a miss when a
// layer is switched, never a wrong binary.
std::vector<std::string> loaded_driver_libraries(const NextFunctions& loader);

}  // namespace jitcache::level_zero
