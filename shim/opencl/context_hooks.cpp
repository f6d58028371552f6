// Context lifetime: the memory tier keeps shadow programs per context, and a program keeps its
// context alive. So when the app lets go of a context, the tier's programs in it go first: a cache
// that kept them would keep every context the app released (about 0.5 GiB each on an H200).
#include "core/engine.hpp"
#include "shim/opencl/app_holds.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"

namespace jitcache::opencl {

cl_context create_context(const cl_context_properties* properties, cl_uint num_devices, const cl_device_id* devices,
                          void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*), void* user_data,
                          cl_int* errcode_ret) {
  cl_context context = next().clCreateContext(properties, num_devices, devices, pfn_notify, user_data, errcode_ret);
  if (context) context_created(context);
  return context;
}

cl_context create_context_from_type(const cl_context_properties* properties, cl_device_type device_type,
                                    void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*),
                                    void* user_data, cl_int* errcode_ret) {
  cl_context context = next().clCreateContextFromType(properties, device_type, pfn_notify, user_data, errcode_ret);
  if (context) context_created(context);
  return context;
}

cl_int retain_context(cl_context context) {
  cl_int status = next().clRetainContext(context);
  if (status == CL_SUCCESS) context_retained(context);
  return status;
}

cl_int release_context(cl_context context) {
  if (last_context_reference(context)) {
    context_released(context);  // from here on the tier keeps nothing new in it (build_hook.cpp)
    if (Engine* engine = Engine::if_started()) engine->forget_scope(reinterpret_cast<MemoryScope>(context));
    return next().clReleaseContext(context);
  }
  cl_int status = next().clReleaseContext(context);
  if (status == CL_SUCCESS) context_released(context);
  return status;
}

}  // namespace jitcache::opencl
