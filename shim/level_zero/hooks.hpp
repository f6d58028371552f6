// The Level Zero hook, with the API's own signature; shim/linux exports it as zeModuleCreate.
#pragma once

#include <ze_api.h>

namespace jitcache::level_zero {

ze_result_t module_create(ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc,
                          ze_module_handle_t* module, ze_module_build_log_handle_t* build_log);

}  // namespace jitcache::level_zero
