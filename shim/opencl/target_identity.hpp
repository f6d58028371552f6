// The key's per-device part for an OpenCL device: device identity, platform/driver versions and
// the vendor library (found from the device's ICD dispatch table) plus loaded compiler libraries.
#pragma once

#include <string>

#include "hashing/build_inputs.hpp"
#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

struct OpenClTarget {
  TargetIdentity identity;
  std::string name;  // for traces
  bool pocl = false;  // served by PoCL (driver_quirks.hpp)
};

// Memoized per device handle (handles are stable for the process lifetime).
const OpenClTarget& target_of(cl_device_id device);

}  // namespace jitcache::opencl
