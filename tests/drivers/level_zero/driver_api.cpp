// zeInit and the driver queries.
#include "driver_identity.hpp"
#include "driver_objects.hpp"
#include "entry_points.hpp"

namespace jitcache::test_ze {

// The 1.8 loader calls this twice per process (once to vet the driver, once for zeInit).
ze_result_t init(ze_init_flags_t flags) {
  if (flags > (ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (flags == ZE_INIT_FLAG_VPU_ONLY) return ZE_RESULT_ERROR_UNINITIALIZED;  // this driver drives a GPU
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get(uint32_t* count, ze_driver_handle_t* drivers) {
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || drivers == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  drivers[0] = the_driver();
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t* version) {
  if (driver == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (version == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (driver != the_driver()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *version = ZE_API_VERSION_CURRENT;
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t* properties) {
  if (driver == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (driver != the_driver()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  fill_driver_properties(*properties);
  return ZE_RESULT_SUCCESS;
}

}  // namespace jitcache::test_ze
