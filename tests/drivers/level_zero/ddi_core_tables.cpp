// The exported ze* DDI table getters: the only symbols this driver exports, besides the tool and
// sysman getters in ddi_tool_tables.cpp. The 1.8 loader refuses the driver if any non-experimental
// core getter is missing; the experimental ones (zeGet*ExpProcAddrTable) are optional and left out.
#include <ze_ddi.h>

#include "ddi_table_fill.hpp"
#include "entry_points.hpp"

namespace jitcache::test_ze {

ze_result_t unsupported_entry() { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }

}  // namespace jitcache::test_ze

using namespace jitcache::test_ze;

extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version,
                                                                         ze_global_dditable_t* table) {
  return provide_table(version, table, [](ze_global_dditable_t& t) { t.pfnInit = init; });
}

extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version,
                                                                         ze_driver_dditable_t* table) {
  return provide_table(version, table, [](ze_driver_dditable_t& t) {
    t.pfnGet = driver_get;
    t.pfnGetApiVersion = driver_get_api_version;
    t.pfnGetProperties = driver_get_properties;
  });
}

extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version,
                                                                         ze_device_dditable_t* table) {
  return provide_table(version, table, [](ze_device_dditable_t& t) {
    t.pfnGet = device_get;
    t.pfnGetProperties = device_get_properties;
    t.pfnGetModuleProperties = device_get_module_properties;
  });
}

extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version,
                                                                          ze_context_dditable_t* table) {
  return provide_table(version, table, [](ze_context_dditable_t& t) {
    t.pfnCreate = context_create;
    t.pfnDestroy = context_destroy;
  });
}

extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetModuleProcAddrTable(ze_api_version_t version,
                                                                         ze_module_dditable_t* table) {
  return provide_table(version, table, [](ze_module_dditable_t& t) {
    t.pfnCreate = module_create;
    t.pfnDestroy = module_destroy;
    t.pfnGetNativeBinary = module_get_native_binary;
    t.pfnGetKernelNames = module_get_kernel_names;
    t.pfnGetProperties = module_get_properties;
  });
}

extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetModuleBuildLogProcAddrTable(
    ze_api_version_t version, ze_module_build_log_dditable_t* table) {
  return provide_table(version, table, [](ze_module_build_log_dditable_t& t) {
    t.pfnDestroy = build_log_destroy;
    t.pfnGetString = build_log_get_string;
  });
}

extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetKernelProcAddrTable(ze_api_version_t version,
                                                                         ze_kernel_dditable_t* table) {
  return provide_table(version, table, [](ze_kernel_dditable_t& t) {
    t.pfnCreate = kernel_create;
    t.pfnDestroy = kernel_destroy;
    t.pfnGetName = kernel_get_name;
  });
}

JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetCommandListProcAddrTable, ze_command_list_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetEventProcAddrTable, ze_event_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetFenceProcAddrTable, ze_fence_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetMemProcAddrTable, ze_mem_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
