// Every OpenCL function jitcache hooks, once: its return type, its API name, the hook that
// handles it (shim/opencl/hooks.hpp) and its parameters and arguments. The hook declarations, the
// LD_PRELOAD exports (shim/linux/preload_exports.cpp), the ICD layer's dispatch entries
// (icd_layer.cpp) and the Windows import table (shim/windows/opencl_hook_table.cpp) are all made
// from this list, so a function hooked on one path is hooked on every path.
//
//   X(return type, API name, hook, (parameters), (arguments))
#pragma once

#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {
using BuildNotify = void(CL_CALLBACK*)(cl_program, void*);
using ContextNotify = void(CL_CALLBACK*)(const char*, const void*, size_t, void*);
}  // namespace jitcache::opencl

#define JITCACHE_HOOKED_OPENCL_FUNCTIONS(X)                                                                        \
  X(cl_program, clCreateProgramWithSource, create_program_with_source,                                            \
    (cl_context context, cl_uint count, const char** strings, const size_t* lengths, cl_int* errcode_ret),        \
    (context, count, strings, lengths, errcode_ret))                                                              \
  X(cl_program, clCreateProgramWithIL, create_program_with_il,                                                    \
    (cl_context context, const void* il, size_t length, cl_int* errcode_ret), (context, il, length, errcode_ret)) \
  X(cl_int, clSetProgramSpecializationConstant, set_program_specialization_constant,                              \
    (cl_program program, cl_uint spec_id, size_t spec_size, const void* spec_value),                              \
    (program, spec_id, spec_size, spec_value))                                                                    \
  X(cl_int, clBuildProgram, build_program,                                                                        \
    (cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,               \
     jitcache::opencl::BuildNotify pfn_notify, void* user_data),                                                  \
    (program, num_devices, device_list, options, pfn_notify, user_data))                                          \
  X(cl_int, clCompileProgram, compile_program,                                                                    \
    (cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,               \
     cl_uint num_input_headers, const cl_program* input_headers, const char** header_include_names,               \
     jitcache::opencl::BuildNotify pfn_notify, void* user_data),                                                  \
    (program, num_devices, device_list, options, num_input_headers, input_headers, header_include_names,          \
     pfn_notify, user_data))                                                                                      \
  X(cl_program, clLinkProgram, link_program,                                                                      \
    (cl_context context, cl_uint num_devices, const cl_device_id* device_list, const char* options,               \
     cl_uint num_input_programs, const cl_program* input_programs, jitcache::opencl::BuildNotify pfn_notify,      \
     void* user_data, cl_int* errcode_ret),                                                                       \
    (context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify, user_data,       \
     errcode_ret))                                                                                                \
  X(cl_kernel, clCreateKernel, create_kernel, (cl_program program, const char* kernel_name, cl_int* errcode_ret),  \
    (program, kernel_name, errcode_ret))                                                                          \
  X(cl_int, clCreateKernelsInProgram, create_kernels_in_program,                                                  \
    (cl_program program, cl_uint num_kernels, cl_kernel* kernels, cl_uint* num_kernels_ret),                      \
    (program, num_kernels, kernels, num_kernels_ret))                                                             \
  X(cl_int, clGetProgramInfo, get_program_info,                                                                   \
    (cl_program program, cl_program_info param_name, size_t param_value_size, void* param_value,                  \
     size_t* param_value_size_ret),                                                                               \
    (program, param_name, param_value_size, param_value, param_value_size_ret))                                   \
  X(cl_int, clGetProgramBuildInfo, get_program_build_info,                                                        \
    (cl_program program, cl_device_id device, cl_program_build_info param_name, size_t param_value_size,          \
     void* param_value, size_t* param_value_size_ret),                                                            \
    (program, device, param_name, param_value_size, param_value, param_value_size_ret))                           \
  X(cl_int, clGetKernelInfo, get_kernel_info,                                                                     \
    (cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void* param_value,                     \
     size_t* param_value_size_ret),                                                                               \
    (kernel, param_name, param_value_size, param_value, param_value_size_ret))                                    \
  X(cl_int, clGetKernelArgInfo, get_kernel_arg_info,                                                              \
    (cl_kernel kernel, cl_uint arg_index, cl_kernel_arg_info param_name, size_t param_value_size,                 \
     void* param_value, size_t* param_value_size_ret),                                                            \
    (kernel, arg_index, param_name, param_value_size, param_value, param_value_size_ret))                         \
  X(cl_program, clCreateProgramWithBinary, create_program_with_binary,                                            \
    (cl_context context, cl_uint num_devices, const cl_device_id* device_list, const size_t* lengths,             \
     const unsigned char** binaries, cl_int* binary_status, cl_int* errcode_ret),                                 \
    (context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret))                           \
  X(cl_program, clCreateProgramWithBuiltInKernels, create_program_with_built_in_kernels,                          \
    (cl_context context, cl_uint num_devices, const cl_device_id* device_list, const char* kernel_names,          \
     cl_int* errcode_ret),                                                                                        \
    (context, num_devices, device_list, kernel_names, errcode_ret))                                               \
  X(cl_int, clRetainProgram, retain_program, (cl_program program), (program))                                     \
  X(cl_int, clReleaseProgram, release_program, (cl_program program), (program))                                   \
  X(cl_kernel, clCloneKernel, clone_kernel, (cl_kernel source_kernel, cl_int* errcode_ret),                       \
    (source_kernel, errcode_ret))                                                                                 \
  X(cl_int, clRetainKernel, retain_kernel, (cl_kernel kernel), (kernel))                                          \
  X(cl_int, clReleaseKernel, release_kernel, (cl_kernel kernel), (kernel))                                        \
  X(cl_context, clCreateContext, create_context,                                                                  \
    (const cl_context_properties* properties, cl_uint num_devices, const cl_device_id* devices,                   \
     jitcache::opencl::ContextNotify pfn_notify, void* user_data, cl_int* errcode_ret),                           \
    (properties, num_devices, devices, pfn_notify, user_data, errcode_ret))                                       \
  X(cl_context, clCreateContextFromType, create_context_from_type,                                                \
    (const cl_context_properties* properties, cl_device_type device_type,                                         \
     jitcache::opencl::ContextNotify pfn_notify, void* user_data, cl_int* errcode_ret),                           \
    (properties, device_type, pfn_notify, user_data, errcode_ret))                                                \
  X(cl_int, clRetainContext, retain_context, (cl_context context), (context))                                     \
  X(cl_int, clReleaseContext, release_context, (cl_context context), (context))
