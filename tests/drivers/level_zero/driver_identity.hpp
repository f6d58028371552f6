// Who this driver and its one device claim to be. Caches key on these values, so they are fixed,
// apart from the driver version that tests may override (see driver_settings.hpp).
#pragma once

#include <cstdint>

#include <ze_api.h>

namespace jitcache::test_ze {

inline constexpr std::uint32_t kVendorId = 0x8086;
inline constexpr std::uint32_t kDeviceId = 0x7e57;  // "test"
inline constexpr const char* kDeviceName = "jitcache test device";
// The highest SPIR-V version this "compiler" accepts (the one zeDeviceGetModuleProperties reports).
inline constexpr std::uint32_t kMaxSpirvMajor = 1;
inline constexpr std::uint32_t kMaxSpirvMinor = 4;

// What a native binary must match to load: the driver that built it, for the device it targets.
struct TargetIdentity {
  std::uint32_t driver_version = 0;
  std::uint32_t device_id = 0;
};
TargetIdentity current_target();

void fill_driver_properties(ze_driver_properties_t& properties);
void fill_device_properties(ze_device_properties_t& properties);
void fill_device_module_properties(ze_device_module_properties_t& properties);

}  // namespace jitcache::test_ze
