// Contexts carry no state here; they exist so that module creation can check its context handle.
#include <memory>

#include "driver_objects.hpp"
#include "entry_points.hpp"

namespace jitcache::test_ze {

ze_result_t context_create(ze_driver_handle_t driver, const ze_context_desc_t* desc, ze_context_handle_t* context) {
  if (driver == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (driver != the_driver()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->flags > ZE_CONTEXT_FLAG_TBD) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  *context = contexts().add(std::make_shared<TestContext>());
  return ZE_RESULT_SUCCESS;
}

ze_result_t context_destroy(ze_context_handle_t context) {
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return contexts().remove(context) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace jitcache::test_ze
