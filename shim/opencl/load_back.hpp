// A replay (a capture helper, `jitcache warm`: core/replay_mark.hpp) loads the binary it built
// before it stores it (docs/decisions/capture.md, "A replay proves its binary loads"): an entry
// every app will load must never be one that only the replay's driver state (a vanished scratch
// folder, a half-packed binary) made. The check runs in the replay's own child process, off any
// app's path; a driver crash there costs that child only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

// "" when `binary` loads on `device` in a context of its own (clCreateProgramWithBinary +
// clBuildProgram with `options`) and names exactly `kernel_names`, in that order; else why not.
// `elapsed_us`: what the check took.
std::string load_back(cl_device_id device, const std::string& binary, const std::string& options,
                      const std::vector<std::string>& kernel_names, std::uint64_t* elapsed_us);

}  // namespace jitcache::opencl
