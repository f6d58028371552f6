#include "driver_identity.hpp"

#include <cstring>

#include "driver_settings.hpp"

namespace jitcache::test_ze {
namespace {

constexpr std::uint8_t kDriverUuid[ZE_MAX_DRIVER_UUID_SIZE] = {'j', 'i', 't', 'c', 'a', 'c', 'h', 'e',
                                                               '-', 'z', 'e', '-', 'd', 'r', 'v', '1'};
constexpr std::uint8_t kDeviceUuid[ZE_MAX_DEVICE_UUID_SIZE] = {'j', 'i', 't', 'c', 'a', 'c', 'h', 'e',
                                                               '-', 'z', 'e', '-', 'd', 'e', 'v', '0'};

}  // namespace

TargetIdentity current_target() { return {driver_version(), kDeviceId}; }

// stype and pNext belong to the caller and are left alone.
void fill_driver_properties(ze_driver_properties_t& properties) {
  std::memcpy(properties.uuid.id, kDriverUuid, sizeof kDriverUuid);
  properties.driverVersion = driver_version();
}

void fill_device_properties(ze_device_properties_t& properties) {
  properties.type = ZE_DEVICE_TYPE_GPU;
  properties.vendorId = kVendorId;
  properties.deviceId = kDeviceId;
  properties.flags = 0;
  properties.subdeviceId = 0;
  properties.coreClockRate = 1000;
  properties.maxMemAllocSize = std::uint64_t{4} << 30;
  properties.maxHardwareContexts = 64;
  properties.maxCommandQueuePriority = 0;
  properties.numThreadsPerEU = 8;
  properties.physicalEUSimdWidth = 8;
  properties.numEUsPerSubslice = 8;
  properties.numSubslicesPerSlice = 4;
  properties.numSlices = 1;
  // The 1.2 structure type reports the timer in cycles per second rather than nanoseconds.
  properties.timerResolution =
      properties.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? 1'000'000'000 : 1;
  properties.timestampValidBits = 64;
  properties.kernelTimestampValidBits = 32;
  std::memcpy(properties.uuid.id, kDeviceUuid, sizeof kDeviceUuid);
  std::memset(properties.name, 0, sizeof properties.name);
  std::strncpy(properties.name, kDeviceName, sizeof properties.name - 1);
}

void fill_device_module_properties(ze_device_module_properties_t& properties) {
  properties.spirvVersionSupported = ZE_MAKE_VERSION(kMaxSpirvMajor, kMaxSpirvMinor);
  properties.flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64;
  properties.fp16flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST;
  properties.fp32flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_FMA;
  properties.fp64flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_FMA;
  properties.maxArgumentsSize = 2048;
  properties.printfBufferSize = 4u << 20;
  // Native binaries load only on the driver version that built them, so the compatibility id
  // changes with the version, as it does for real drivers.
  const TargetIdentity target = current_target();
  std::memset(properties.nativeKernelSupported.id, 0, sizeof properties.nativeKernelSupported.id);
  std::memcpy(properties.nativeKernelSupported.id, "JCZE", 4);
  std::memcpy(properties.nativeKernelSupported.id + 4, &target.device_id, 4);
  std::memcpy(properties.nativeKernelSupported.id + 8, &target.driver_version, 4);
}

}  // namespace jitcache::test_ze
