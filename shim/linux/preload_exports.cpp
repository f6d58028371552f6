// LD_PRELOAD entry points: the app's calls to these OpenCL functions land here first and go to
// the shared hooks; everything else the app calls reaches the real loader untouched.
#include "shim/opencl/hooks.hpp"

#define JITCACHE_EXPORT extern "C" __attribute__((visibility("default")))

namespace cl = jitcache::opencl;

JITCACHE_EXPORT cl_program clCreateProgramWithSource(cl_context context, cl_uint count, const char** strings,
                                                     const size_t* lengths, cl_int* errcode_ret) {
  return cl::create_program_with_source(context, count, strings, lengths, errcode_ret);
}

JITCACHE_EXPORT cl_program clCreateProgramWithIL(cl_context context, const void* il, size_t length,
                                                 cl_int* errcode_ret) {
  return cl::create_program_with_il(context, il, length, errcode_ret);
}

JITCACHE_EXPORT cl_int clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id, size_t spec_size,
                                                          const void* spec_value) {
  return cl::set_program_specialization_constant(program, spec_id, spec_size, spec_value);
}

JITCACHE_EXPORT cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                                      const char* options, void(CL_CALLBACK* pfn_notify)(cl_program, void*),
                                      void* user_data) {
  return cl::build_program(program, num_devices, device_list, options, pfn_notify, user_data);
}

JITCACHE_EXPORT cl_kernel clCreateKernel(cl_program program, const char* kernel_name, cl_int* errcode_ret) {
  return cl::create_kernel(program, kernel_name, errcode_ret);
}

JITCACHE_EXPORT cl_int clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                                                cl_uint* num_kernels_ret) {
  return cl::create_kernels_in_program(program, num_kernels, kernels, num_kernels_ret);
}

JITCACHE_EXPORT cl_int clGetProgramInfo(cl_program program, cl_program_info param_name, size_t param_value_size,
                                        void* param_value, size_t* param_value_size_ret) {
  return cl::get_program_info(program, param_name, param_value_size, param_value, param_value_size_ret);
}

JITCACHE_EXPORT cl_int clGetProgramBuildInfo(cl_program program, cl_device_id device,
                                             cl_program_build_info param_name, size_t param_value_size,
                                             void* param_value, size_t* param_value_size_ret) {
  return cl::get_program_build_info(program, device, param_name, param_value_size, param_value,
                                    param_value_size_ret);
}

JITCACHE_EXPORT cl_int clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size,
                                       void* param_value, size_t* param_value_size_ret) {
  return cl::get_kernel_info(kernel, param_name, param_value_size, param_value, param_value_size_ret);
}

JITCACHE_EXPORT cl_int clReleaseProgram(cl_program program) { return cl::release_program(program); }

JITCACHE_EXPORT cl_int clReleaseKernel(cl_kernel kernel) { return cl::release_kernel(kernel); }
