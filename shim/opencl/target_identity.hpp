// The key's per-device part for an OpenCL device: device identity, platform/driver versions and
// the vendor library (found from the device's ICD dispatch table) plus its compiler libraries.
// Shared by the hooks and `jitcache doctor` (which shows what an app's key gets): it asks the
// driver only through the functions it is given, so it links without the rest of the adapter.
#pragma once

#include <string>

#include "hashing/build_inputs.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

struct OpenClTarget {
  TargetIdentity identity;
  std::string name;  // for traces
  bool pocl = false;    // served by PoCL (driver_quirks.hpp)
  bool nvidia = false;  // served by NVIDIA's driver (driver_quirks.hpp)
};

// Asked through `functions` (clGetDeviceInfo, clGetPlatformInfo): the hooks pass next(), the
// tool the loader's exports. Memoized per device handle (stable for the process lifetime).
const OpenClTarget& target_of(cl_device_id device, const NextFunctions& functions);

}  // namespace jitcache::opencl
