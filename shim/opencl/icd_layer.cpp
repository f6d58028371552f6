// The OpenCL ICD layer entry points (cl_loader_layers, OPENCL_LAYERS): the loader hands over the
// dispatch table it would call next; the layer returns a copy with the hooked entries replaced by
// the same hook functions the LD_PRELOAD exports use. Apps that dlopen libOpenCL and call through
// dlsym'ed pointers still go through the loader, so they reach these hooks too.
#include <CL/cl_layer.h>

#include <dlfcn.h>

#include <cstring>

#include "shim/opencl/hook_owner.hpp"
#include "shim/opencl/hooked_functions.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"

#define JITCACHE_EXPORT extern "C" __attribute__((visibility("default")))

namespace cl = jitcache::opencl;

namespace {

constexpr char kLayerName[] = "jitcache (OpenCL program binary cache)";
constexpr cl_uint kDispatchEntries = sizeof(cl_icd_dispatch) / sizeof(void*);

cl_icd_dispatch g_layer_dispatch;

// The target's entries by position; entries past what the loader knows stay null.
cl_icd_dispatch copy_of(const cl_icd_dispatch* target, cl_uint num_entries) {
  cl_icd_dispatch copy;
  std::memset(&copy, 0, sizeof copy);
  std::memcpy(&copy, target, sizeof(void*) * (num_entries < kDispatchEntries ? num_entries : kDispatchEntries));
  return copy;
}

cl::NextFunctions next_functions_of(const cl_icd_dispatch& target) {
  cl::NextFunctions functions;
#define JITCACHE_FROM_DISPATCH(name) functions.name = reinterpret_cast<decltype(&::name)>(target.name);
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_FROM_DISPATCH)
#undef JITCACHE_FROM_DISPATCH
  return functions;
}

// Every hooked entry the loader can forward (clCreateProgramWithIL and clCloneKernel exist only
// in OpenCL 2.1 loaders; the ones every loader has are checked in clInitLayer).
void install_hooks(cl_icd_dispatch& dispatch) {
#define JITCACHE_INSTALL_HOOK(result, api_name, hook, parameters, arguments) \
  if (dispatch.api_name) dispatch.api_name = cl::hook;
  JITCACHE_HOOKED_OPENCL_FUNCTIONS(JITCACHE_INSTALL_HOOK)
#undef JITCACHE_INSTALL_HOOK
}

// Whether `function` lives in a copy of libjitcache.so (this one included): another jitcache layer
// below this one (a system-wide layer plus a preloaded build, which lists itself as a layer too)
// already hooks every build, and hooking twice would look each build up twice.
bool belongs_to_jitcache(void* function) {
  Dl_info info{};
  if (!function || !::dladdr(function, &info) || !info.dli_fname) return false;
  void* handle = ::dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return false;
  const bool jitcache = ::dlsym(handle, "jitcache_opencl_layer_active") != nullptr;
  ::dlclose(handle);
  return jitcache;
}

}  // namespace

JITCACHE_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size,
                                                  void* param_value, size_t* param_value_size_ret) {
  const void* value = nullptr;
  size_t size = 0;
  static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  switch (param_name) {
    case CL_LAYER_API_VERSION:
      value = &version;
      size = sizeof version;
      break;
    case CL_LAYER_NAME:
      value = kLayerName;
      size = sizeof kLayerName;
      break;
    default:
      return CL_INVALID_VALUE;
  }
  if (param_value) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, value, size);
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

JITCACHE_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch,
                                               cl_uint* num_entries_ret,
                                               const cl_icd_dispatch** layer_dispatch_ret) {
  if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret) return CL_INVALID_VALUE;
  cl_icd_dispatch target = copy_of(target_dispatch, num_entries);
  // The hooks need at least every entry they forward to.
  if (!target.clBuildProgram || !target.clGetProgramInfo || !target.clCreateProgramWithBinary) return CL_INVALID_VALUE;
  g_layer_dispatch = target;
  if (!belongs_to_jitcache(reinterpret_cast<void*>(target.clBuildProgram))) {
    cl::set_layer_target(next_functions_of(target));
    install_hooks(g_layer_dispatch);
  }
  cl::claim_hooks_for_layer();
  *num_entries_ret = num_entries < kDispatchEntries ? num_entries : kDispatchEntries;
  *layer_dispatch_ret = &g_layer_dispatch;
  return CL_SUCCESS;
}
