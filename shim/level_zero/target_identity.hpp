// What decides a Level Zero device's binaries: the device (vendor, device id, name; never the
// per-card UUID) and its compiler (driver version and UUID, native-binary compatibility UUID, the
// driver libraries' files). Shared by the hook and `jitcache doctor`: it asks the loader only
// through the functions it is given, so it links without the rest of the adapter.
#pragma once

#include <string>

#include <ze_api.h>

#include "hashing/build_inputs.hpp"
#include "shim/level_zero/next_functions.hpp"

namespace jitcache::level_zero {

struct ZeTarget {
  std::string name;         // device name, for traces and sidecars
  TargetIdentity identity;
  std::string unusable;     // non-empty: the device could not be described, so do not cache
};

// Asked through `functions` (the hook passes next(), the tool the loader's exports); described on
// first use and remembered for the process (never destroyed).
const ZeTarget& target_of(ze_device_handle_t device, const NextFunctions& functions);

}  // namespace jitcache::level_zero
