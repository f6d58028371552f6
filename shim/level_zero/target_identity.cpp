#include "shim/level_zero/target_identity.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include "hashing/compiler_identity.hpp"
#include "shim/level_zero/driver_libraries.hpp"

namespace jitcache::level_zero {
namespace {

template <std::size_t N>
std::string hex(const std::uint8_t (&bytes)[N]) {
  std::string text;
  char digits[3];
  for (std::uint8_t byte : bytes) {
    std::snprintf(digits, sizeof digits, "%02x", byte);
    text += digits;
  }
  return text;
}

std::vector<ze_device_handle_t> sub_devices(const NextFunctions& loader, ze_device_handle_t device) {
  std::uint32_t count = 0;
  if (loader.zeDeviceGetSubDevices(device, &count, nullptr) != ZE_RESULT_SUCCESS || count == 0) return {};
  std::vector<ze_device_handle_t> devices(count);
  if (loader.zeDeviceGetSubDevices(device, &count, devices.data()) != ZE_RESULT_SUCCESS) return {};
  devices.resize(count);
  return devices;
}

bool owns_device(const NextFunctions& loader, ze_device_handle_t root, ze_device_handle_t device) {
  if (root == device) return true;
  for (ze_device_handle_t sub : sub_devices(loader, root)) {
    if (owns_device(loader, sub, device)) return true;
  }
  return false;
}

// The driver a device belongs to: Level Zero has no query for it, so search every driver's devices.
ze_driver_handle_t driver_of(const NextFunctions& loader, ze_device_handle_t device) {
  std::uint32_t count = 0;
  if (loader.zeDriverGet(&count, nullptr) != ZE_RESULT_SUCCESS) return nullptr;
  std::vector<ze_driver_handle_t> drivers(count);
  if (loader.zeDriverGet(&count, drivers.data()) != ZE_RESULT_SUCCESS) return nullptr;
  for (ze_driver_handle_t driver : drivers) {
    std::uint32_t device_count = 0;
    if (loader.zeDeviceGet(driver, &device_count, nullptr) != ZE_RESULT_SUCCESS) continue;
    std::vector<ze_device_handle_t> devices(device_count);
    if (loader.zeDeviceGet(driver, &device_count, devices.data()) != ZE_RESULT_SUCCESS) continue;
    for (ze_device_handle_t root : devices) {
      if (owns_device(loader, root, device)) return driver;
    }
  }
  return nullptr;
}

void describe_compiler(const NextFunctions& loader, ze_driver_handle_t driver, ze_device_handle_t device,
                       ZeTarget& target) {
  ze_driver_properties_t driver_properties = {ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, nullptr, {}, 0};
  if (loader.zeDriverGetProperties(driver, &driver_properties) != ZE_RESULT_SUCCESS) {
    target.unusable = "zeDriverGetProperties failed";
    return;
  }
  ze_device_module_properties_t module_properties{};
  module_properties.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  if (loader.zeDeviceGetModuleProperties(device, &module_properties) != ZE_RESULT_SUCCESS) {
    target.unusable = "zeDeviceGetModuleProperties failed";
    return;
  }
  CompilerIdentity& compiler = target.identity.compiler;
  compiler.versions = {
      {"driver_version", std::to_string(driver_properties.driverVersion)},
      {"driver_uuid", hex(driver_properties.uuid.id)},
      {"native_kernel_uuid", hex(module_properties.nativeKernelSupported.id)},
      {"spirv_version_supported", std::to_string(module_properties.spirvVersionSupported)},
  };
  std::vector<std::string> libraries = loaded_driver_libraries(loader);
  for (const std::string& library : compiler_libraries_of(libraries)) {  // not other drivers' (opencl/target_identity.cpp)
    if (std::find(libraries.begin(), libraries.end(), library) == libraries.end()) libraries.push_back(library);
  }
  for (const std::string& library : libraries) compiler.libraries.push_back(identify_library(library));
}

ZeTarget describe(const NextFunctions& loader, ze_device_handle_t device) {
  ZeTarget target;
  ze_device_properties_t properties{};
  properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  if (loader.zeDeviceGetProperties(device, &properties) != ZE_RESULT_SUCCESS) {
    target.unusable = "zeDeviceGetProperties failed";
    return target;
  }
  properties.name[sizeof properties.name - 1] = '\0';
  target.name = properties.name;
  target.identity.device.fields = {
      {"vendor_id", std::to_string(properties.vendorId)},
      {"device_id", std::to_string(properties.deviceId)},
      {"name", target.name},
      {"type", std::to_string(properties.type)},
  };
  ze_driver_handle_t driver = driver_of(loader, device);
  if (!driver) {
    target.unusable = "the device's driver was not found";
    return target;
  }
  describe_compiler(loader, driver, device, target);
  return target;
}

}  // namespace

const ZeTarget& target_of(ze_device_handle_t device, const NextFunctions& functions) {
  static std::mutex mutex;
  static auto* targets = new std::map<ze_device_handle_t, ZeTarget>;  // never destroyed
  std::lock_guard lock(mutex);
  auto it = targets->find(device);
  if (it == targets->end()) it = targets->emplace(device, describe(functions, device)).first;
  return it->second;
}

}  // namespace jitcache::level_zero
