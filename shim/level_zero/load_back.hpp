// A replay (a capture helper, `jitcache warm`: core/replay_mark.hpp) loads the native binary it is
// about to store back first, as an app's hit will (docs/decisions/capture.md, "A replay proves its
// binary loads"); the OpenCL adapter's twin is shim/opencl/load_back.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ze_api.h>

namespace jitcache::level_zero {

// "" when `binary` creates a module on `device` in `context` (zeModuleCreate with
// ZE_MODULE_FORMAT_NATIVE and `build_flags`, as a hit does) that names exactly `kernel_names`, in
// that order; else why not. `elapsed_us`: what the check took.
std::string load_back(ze_context_handle_t context, ze_device_handle_t device, const std::string& binary,
                      const char* build_flags, const std::vector<std::string>& kernel_names, std::uint64_t* elapsed_us);

// The module's kernel names, in the driver's order (empty when it cannot say).
std::vector<std::string> kernel_names(ze_module_handle_t module);

}  // namespace jitcache::level_zero
