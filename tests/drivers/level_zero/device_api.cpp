// The one device and its properties.
#include "driver_identity.hpp"
#include "driver_objects.hpp"
#include "entry_points.hpp"

namespace jitcache::test_ze {
namespace {

ze_result_t check_device(ze_device_handle_t device, const void* out) {
  if (device == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return device == the_device() ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace

ze_result_t device_get(ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices) {
  if (driver == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (driver != the_driver()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (*count == 0 || devices == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  devices[0] = the_device();
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_properties(ze_device_handle_t device, ze_device_properties_t* properties) {
  if (ze_result_t result = check_device(device, properties); result != ZE_RESULT_SUCCESS) return result;
  fill_device_properties(*properties);
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_module_properties(ze_device_handle_t device, ze_device_module_properties_t* properties) {
  if (ze_result_t result = check_device(device, properties); result != ZE_RESULT_SUCCESS) return result;
  fill_device_module_properties(*properties);
  return ZE_RESULT_SUCCESS;
}

}  // namespace jitcache::test_ze
