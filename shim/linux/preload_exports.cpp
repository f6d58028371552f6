// LD_PRELOAD entry points: the app's calls to these OpenCL functions land here first and go to
// the shared hooks; everything else the app calls reaches the real loader untouched. When an ICD
// layer copy of jitcache is active, the layer owns the hooks and these only forward to the loader
// (which calls the layer), so no build is hooked twice.
#include "shim/opencl/hook_owner.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"

#define JITCACHE_EXPORT extern "C" __attribute__((visibility("default")))

namespace cl = jitcache::opencl;

// A layer is only ever initialised by a loader, so the loader's export exists when it owns the hooks.
#define JITCACHE_HOOK_OR_FORWARD(api_name, hook, ...)                                            \
  if (cl::layer_owns_hooks()) {                                                                \
    return cl::loader_functions().api_name(__VA_ARGS__);                                       \
  }                                                                                            \
  return cl::hook(__VA_ARGS__)

JITCACHE_EXPORT cl_program clCreateProgramWithSource(cl_context context, cl_uint count, const char** strings,
                                                     const size_t* lengths, cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCreateProgramWithSource, create_program_with_source, context, count, strings, lengths,
                           errcode_ret);
}

JITCACHE_EXPORT cl_program clCreateProgramWithIL(cl_context context, const void* il, size_t length,
                                                 cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCreateProgramWithIL, create_program_with_il, context, il, length, errcode_ret);
}

JITCACHE_EXPORT cl_int clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id, size_t spec_size,
                                                          const void* spec_value) {
  JITCACHE_HOOK_OR_FORWARD(clSetProgramSpecializationConstant, set_program_specialization_constant, program, spec_id,
                           spec_size, spec_value);
}

JITCACHE_EXPORT cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                                      const char* options, void(CL_CALLBACK* pfn_notify)(cl_program, void*),
                                      void* user_data) {
  JITCACHE_HOOK_OR_FORWARD(clBuildProgram, build_program, program, num_devices, device_list, options, pfn_notify,
                           user_data);
}

JITCACHE_EXPORT cl_int clCompileProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                                        const char* options, cl_uint num_input_headers,
                                        const cl_program* input_headers, const char** header_include_names,
                                        void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data) {
  JITCACHE_HOOK_OR_FORWARD(clCompileProgram, compile_program, program, num_devices, device_list, options,
                           num_input_headers, input_headers, header_include_names, pfn_notify, user_data);
}

JITCACHE_EXPORT cl_program clLinkProgram(cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                                         const char* options, cl_uint num_input_programs,
                                         const cl_program* input_programs,
                                         void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data,
                                         cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clLinkProgram, link_program, context, num_devices, device_list, options,
                           num_input_programs, input_programs, pfn_notify, user_data, errcode_ret);
}

JITCACHE_EXPORT cl_kernel clCreateKernel(cl_program program, const char* kernel_name, cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCreateKernel, create_kernel, program, kernel_name, errcode_ret);
}

JITCACHE_EXPORT cl_int clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                                                cl_uint* num_kernels_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCreateKernelsInProgram, create_kernels_in_program, program, num_kernels, kernels,
                           num_kernels_ret);
}

JITCACHE_EXPORT cl_int clGetProgramInfo(cl_program program, cl_program_info param_name, size_t param_value_size,
                                        void* param_value, size_t* param_value_size_ret) {
  JITCACHE_HOOK_OR_FORWARD(clGetProgramInfo, get_program_info, program, param_name, param_value_size, param_value,
                           param_value_size_ret);
}

JITCACHE_EXPORT cl_int clGetProgramBuildInfo(cl_program program, cl_device_id device,
                                             cl_program_build_info param_name, size_t param_value_size,
                                             void* param_value, size_t* param_value_size_ret) {
  JITCACHE_HOOK_OR_FORWARD(clGetProgramBuildInfo, get_program_build_info, program, device, param_name,
                           param_value_size, param_value, param_value_size_ret);
}

JITCACHE_EXPORT cl_int clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size,
                                       void* param_value, size_t* param_value_size_ret) {
  JITCACHE_HOOK_OR_FORWARD(clGetKernelInfo, get_kernel_info, kernel, param_name, param_value_size, param_value,
                           param_value_size_ret);
}

JITCACHE_EXPORT cl_int clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_index, cl_kernel_arg_info param_name,
                                          size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  JITCACHE_HOOK_OR_FORWARD(clGetKernelArgInfo, get_kernel_arg_info, kernel, arg_index, param_name, param_value_size,
                           param_value, param_value_size_ret);
}

JITCACHE_EXPORT cl_program clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                     const cl_device_id* device_list, const size_t* lengths,
                                                     const unsigned char** binaries, cl_int* binary_status,
                                                     cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCreateProgramWithBinary, create_program_with_binary, context, num_devices, device_list,
                           lengths, binaries, binary_status, errcode_ret);
}

JITCACHE_EXPORT cl_program clCreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                                             const cl_device_id* device_list, const char* kernel_names,
                                                             cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCreateProgramWithBuiltInKernels, create_program_with_built_in_kernels, context,
                           num_devices, device_list, kernel_names, errcode_ret);
}

JITCACHE_EXPORT cl_int clRetainProgram(cl_program program) {
  JITCACHE_HOOK_OR_FORWARD(clRetainProgram, retain_program, program);
}

JITCACHE_EXPORT cl_int clReleaseProgram(cl_program program) {
  JITCACHE_HOOK_OR_FORWARD(clReleaseProgram, release_program, program);
}

JITCACHE_EXPORT cl_kernel clCloneKernel(cl_kernel source_kernel, cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCloneKernel, clone_kernel, source_kernel, errcode_ret);
}

JITCACHE_EXPORT cl_int clRetainKernel(cl_kernel kernel) {
  JITCACHE_HOOK_OR_FORWARD(clRetainKernel, retain_kernel, kernel);
}

JITCACHE_EXPORT cl_int clReleaseKernel(cl_kernel kernel) {
  JITCACHE_HOOK_OR_FORWARD(clReleaseKernel, release_kernel, kernel);
}

JITCACHE_EXPORT cl_context clCreateContext(const cl_context_properties* properties, cl_uint num_devices,
                                           const cl_device_id* devices,
                                           void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*),
                                           void* user_data, cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCreateContext, create_context, properties, num_devices, devices, pfn_notify, user_data,
                           errcode_ret);
}

JITCACHE_EXPORT cl_context clCreateContextFromType(const cl_context_properties* properties, cl_device_type device_type,
                                                   void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t,
                                                                                 void*),
                                                   void* user_data, cl_int* errcode_ret) {
  JITCACHE_HOOK_OR_FORWARD(clCreateContextFromType, create_context_from_type, properties, device_type, pfn_notify,
                           user_data, errcode_ret);
}

JITCACHE_EXPORT cl_int clRetainContext(cl_context context) {
  JITCACHE_HOOK_OR_FORWARD(clRetainContext, retain_context, context);
}

JITCACHE_EXPORT cl_int clReleaseContext(cl_context context) {
  JITCACHE_HOOK_OR_FORWARD(clReleaseContext, release_context, context);
}

// How a layer that is another copy of libjitcache.so tells this preloaded copy to stand down.
JITCACHE_EXPORT void jitcache_opencl_layer_active() { cl::note_layer_active(); }
