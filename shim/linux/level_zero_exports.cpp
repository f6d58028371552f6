// LD_PRELOAD entry point for Level Zero: the app's zeModuleCreate lands here first; every other
// ze* call reaches the real loader untouched.
#include "shim/level_zero/hooks.hpp"

extern "C" __attribute__((visibility("default"))) ze_result_t zeModuleCreate(
    ze_context_handle_t hContext, ze_device_handle_t hDevice, const ze_module_desc_t* desc,
    ze_module_handle_t* phModule, ze_module_build_log_handle_t* phBuildLog) {
  return jitcache::level_zero::module_create(hContext, hDevice, desc, phModule, phBuildLog);
}
