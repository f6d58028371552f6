// The OpenCL platforms and Level Zero drivers this machine offers an app, found through the
// system's loaders (dlopen, as an app would), and what the key of each of their devices gets as
// compiler identity: computed by the adapters' own code (shim/*/target_identity), not a copy.
// Linux only (`jitcache doctor`).
#pragma once

#include <string>
#include <vector>

#include "hashing/build_inputs.hpp"

namespace jitcache::tool {

struct VisibleDevice {
  std::string platform;     // OpenCL: the platform's name; Level Zero: "driver N"
  std::string name;         // the device's name, as traces show it
  TargetIdentity identity;  // exactly what the adapter keys a build on this device with
  std::string unusable;     // non-empty: the adapter would not cache builds for this device
};

struct VisibleDrivers {
  std::string problem;                 // non-empty: no loader, or it offers nothing (then `devices` is empty)
  std::vector<std::string> platforms;  // OpenCL platforms / Level Zero drivers, described
  std::vector<VisibleDevice> devices;
};

// Each runs in a child process of its own (tools/lib/isolated_call.hpp): a driver that crashes
// or hangs becomes `problem`, and one API's libraries never count in the other's identity.
// Loads libOpenCL.so.1 and describes every device of every platform.
VisibleDrivers visible_opencl_drivers();

// Loads libze_loader.so.1, zeInit, and describes every device of every driver.
VisibleDrivers visible_level_zero_drivers();

}  // namespace jitcache::tool
