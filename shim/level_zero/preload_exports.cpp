// LD_PRELOAD entry points for Level Zero: the app's zeModuleCreate lands here first, and the
// build log calls (a served module's log answers the recorded one); every other ze* call reaches
// the real loader untouched. Level Zero is Linux-only, so they live here, not in shim/linux/.
#include "shim/level_zero/hooks.hpp"
#include "shim/level_zero/recorded_build_log.hpp"

extern "C" __attribute__((visibility("default"))) ze_result_t zeModuleCreate(
    ze_context_handle_t hContext, ze_device_handle_t hDevice, const ze_module_desc_t* desc,
    ze_module_handle_t* phModule, ze_module_build_log_handle_t* phBuildLog) {
  return jitcache::level_zero::module_create(hContext, hDevice, desc, phModule, phBuildLog);
}

extern "C" __attribute__((visibility("default"))) ze_result_t zeModuleBuildLogGetString(
    ze_module_build_log_handle_t hModuleBuildLog, size_t* pSize, char* pBuildLog) {
  return jitcache::level_zero::build_log_get_string(hModuleBuildLog, pSize, pBuildLog);
}

extern "C" __attribute__((visibility("default"))) ze_result_t zeModuleBuildLogDestroy(
    ze_module_build_log_handle_t hModuleBuildLog) {
  return jitcache::level_zero::build_log_destroy(hModuleBuildLog);
}

extern "C" __attribute__((visibility("default"))) ze_result_t zeContextDestroy(ze_context_handle_t hContext) {
  return jitcache::level_zero::context_destroy(hContext);
}
