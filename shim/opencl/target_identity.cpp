#include "shim/opencl/target_identity.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "hashing/compiler_identity.hpp"

namespace jitcache::opencl {
namespace {

std::string device_string(const NextFunctions& driver, cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (driver.clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  if (driver.clGetDeviceInfo(device, param, size, value.data(), nullptr) != CL_SUCCESS) return {};
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::string platform_string(const NextFunctions& driver, cl_platform_id platform, cl_platform_info param) {
  size_t size = 0;
  if (driver.clGetPlatformInfo(platform, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  if (driver.clGetPlatformInfo(platform, param, size, value.data(), nullptr) != CL_SUCCESS) return {};
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

template <typename T>
T device_value(const NextFunctions& driver, cl_device_id device, cl_device_info param) {
  T value{};
  driver.clGetDeviceInfo(device, param, sizeof value, &value, nullptr);
  return value;
}

// Every ICD object starts with a pointer to its vendor's dispatch table; the table's entries
// live in the vendor library, which dladdr names.
std::string vendor_library(cl_device_id device) {
  const auto* dispatch = *reinterpret_cast<const cl_icd_dispatch* const*>(device);
  if (!dispatch) return {};
  return library_containing(reinterpret_cast<const void*>(dispatch->clBuildProgram));
}

OpenClTarget describe(cl_device_id device, const NextFunctions& driver) {
  OpenClTarget target;
  auto platform = device_value<cl_platform_id>(driver, device, CL_DEVICE_PLATFORM);
  CompilerIdentity& compiler = target.identity.compiler;
  std::vector<std::string> libraries;
  if (std::string vendor = vendor_library(device); !vendor.empty()) libraries.push_back(vendor);
  // This driver's compiler libraries only: the ICD loader loads every registered driver into the
  // app, and another driver's (Mesa's libLLVMSPIRVLib) must not change PoCL's keys.
  for (const std::string& library : compiler_libraries_of(libraries)) {
    if (std::find(libraries.begin(), libraries.end(), library) == libraries.end()) libraries.push_back(library);
  }
  for (const std::string& library : libraries) compiler.libraries.push_back(identify_library(library));
  const std::string platform_name = platform_string(driver, platform, CL_PLATFORM_NAME);
  compiler.versions = {
      {"platform_name", platform_name},
      {"platform_version", platform_string(driver, platform, CL_PLATFORM_VERSION)},
      {"driver_version", device_string(driver, device, CL_DRIVER_VERSION)},
  };
  target.name = device_string(driver, device, CL_DEVICE_NAME);
  target.pocl = platform_name == "Portable Computing Language";
  target.nvidia = platform_name == "NVIDIA CUDA";
  target.identity.device.fields = {
      {"vendor_id", std::to_string(device_value<cl_uint>(driver, device, CL_DEVICE_VENDOR_ID))},
      {"vendor", device_string(driver, device, CL_DEVICE_VENDOR)},
      {"name", target.name},
      {"device_version", device_string(driver, device, CL_DEVICE_VERSION)},
      {"opencl_c_version", device_string(driver, device, CL_DEVICE_OPENCL_C_VERSION)},
      {"address_bits", std::to_string(device_value<cl_uint>(driver, device, CL_DEVICE_ADDRESS_BITS))},
  };
  return target;
}

}  // namespace

const OpenClTarget& target_of(cl_device_id device, const NextFunctions& functions) {
  static std::mutex mutex;
  static auto* targets = new std::map<cl_device_id, OpenClTarget>;  // never destroyed
  std::lock_guard lock(mutex);
  auto it = targets->find(device);
  if (it == targets->end()) it = targets->emplace(device, describe(device, functions)).first;
  return it->second;
}

}  // namespace jitcache::opencl
