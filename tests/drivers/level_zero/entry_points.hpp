// The Level Zero entries this driver implements; ddi_core_tables.cpp installs them in the DDI
// tables. They are deliberately not named ze*: a driver that defined zeModuleCreate itself would
// export it (ze_api.h declares it visible) and interpose on the loader's own symbol.
#pragma once

#include <ze_api.h>

namespace jitcache::test_ze {

// driver_api.cpp
ze_result_t init(ze_init_flags_t flags);
ze_result_t driver_get(uint32_t* count, ze_driver_handle_t* drivers);
ze_result_t driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t* version);
ze_result_t driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t* properties);

// device_api.cpp
ze_result_t device_get(ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices);
ze_result_t device_get_properties(ze_device_handle_t device, ze_device_properties_t* properties);
ze_result_t device_get_module_properties(ze_device_handle_t device, ze_device_module_properties_t* properties);

// context_api.cpp
ze_result_t context_create(ze_driver_handle_t driver, const ze_context_desc_t* desc, ze_context_handle_t* context);
ze_result_t context_destroy(ze_context_handle_t context);

// module_api.cpp
ze_result_t module_create(ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc,
                          ze_module_handle_t* module, ze_module_build_log_handle_t* build_log);
ze_result_t module_destroy(ze_module_handle_t module);
ze_result_t module_get_native_binary(ze_module_handle_t module, size_t* size, uint8_t* binary);
ze_result_t module_get_kernel_names(ze_module_handle_t module, uint32_t* count, const char** names);
ze_result_t module_get_properties(ze_module_handle_t module, ze_module_properties_t* properties);

// build_log_api.cpp
ze_result_t build_log_destroy(ze_module_build_log_handle_t build_log);
ze_result_t build_log_get_string(ze_module_build_log_handle_t build_log, size_t* size, char* text);

// kernel_api.cpp
ze_result_t kernel_create(ze_module_handle_t module, const ze_kernel_desc_t* desc, ze_kernel_handle_t* kernel);
ze_result_t kernel_destroy(ze_kernel_handle_t kernel);
ze_result_t kernel_get_name(ze_kernel_handle_t kernel, size_t* size, char* name);

}  // namespace jitcache::test_ze
