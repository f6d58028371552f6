// Build logs outlive their module (the specification allows destroying them in either order).
#include "copy_string.hpp"
#include "driver_objects.hpp"
#include "entry_points.hpp"

namespace jitcache::test_ze {

ze_result_t build_log_destroy(ze_module_build_log_handle_t build_log) {
  if (build_log == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return build_logs().remove(build_log) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t build_log_get_string(ze_module_build_log_handle_t build_log, size_t* size, char* text) {
  if (build_log == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto found = build_logs().find(build_log);
  if (!found) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  copy_string_out(found->text, size, text);
  return ZE_RESULT_SUCCESS;
}

}  // namespace jitcache::test_ze
