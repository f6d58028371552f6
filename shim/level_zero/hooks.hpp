// The Level Zero hooks, with the API's own signatures; shim/linux exports them by the API's names.
#pragma once

#include <ze_api.h>

namespace jitcache::level_zero {

ze_result_t module_create(ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc,
                          ze_module_handle_t* module, ze_module_build_log_handle_t* build_log);
// The memory tier keeps native binaries per context: the context's go with it (never a driver
// object: Level Zero modules are the app's alone).
ze_result_t context_destroy(ze_context_handle_t context);

}  // namespace jitcache::level_zero
