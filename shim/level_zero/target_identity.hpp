// What decides a Level Zero device's binaries: the device (vendor, device id, name; never the
// per-card UUID) and its compiler (driver version and UUID, native-binary compatibility UUID, the
// driver libraries' files).
#pragma once

#include <string>

#include <ze_api.h>

#include "hashing/build_inputs.hpp"

namespace jitcache::level_zero {

struct ZeTarget {
  std::string name;         // device name, for traces and sidecars
  TargetIdentity identity;
  std::string unusable;     // non-empty: the device could not be described, so do not cache
};

// Described on first use and remembered for the process (never destroyed).
const ZeTarget& target_of(ze_device_handle_t device);

}  // namespace jitcache::level_zero
