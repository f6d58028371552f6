// The OpenCL hooks, with the API's own signatures. Both injection paths (LD_PRELOAD exports,
// the ICD layer's dispatch table) point at these same functions.
#pragma once

#include "shim/opencl/app_holds.hpp"
#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

using BuildNotify = void(CL_CALLBACK*)(cl_program, void*);

cl_program create_program_with_source(cl_context context, cl_uint count, const char** strings,
                                      const size_t* lengths, cl_int* errcode_ret);
cl_program create_program_with_il(cl_context context, const void* il, size_t length, cl_int* errcode_ret);
cl_int set_program_specialization_constant(cl_program program, cl_uint spec_id, size_t spec_size,
                                           const void* spec_value);
cl_int build_program(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                     const char* options, BuildNotify pfn_notify, void* user_data);
cl_int compile_program(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                       const char* options, cl_uint num_input_headers, const cl_program* input_headers,
                       const char** header_include_names, BuildNotify pfn_notify, void* user_data);
cl_program link_program(cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                        const char* options, cl_uint num_input_programs, const cl_program* input_programs,
                        BuildNotify pfn_notify, void* user_data, cl_int* errcode_ret);

cl_kernel create_kernel(cl_program program, const char* kernel_name, cl_int* errcode_ret);
cl_int create_kernels_in_program(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                                 cl_uint* num_kernels_ret);
cl_int get_program_info(cl_program program, cl_program_info param_name, size_t param_value_size,
                        void* param_value, size_t* param_value_size_ret);
cl_int get_program_build_info(cl_program program, cl_device_id device, cl_program_build_info param_name,
                              size_t param_value_size, void* param_value, size_t* param_value_size_ret);
cl_int get_kernel_info(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void* param_value,
                       size_t* param_value_size_ret);
cl_int get_kernel_arg_info(cl_kernel kernel, cl_uint arg_index, cl_kernel_arg_info param_name, size_t param_value_size,
                           void* param_value, size_t* param_value_size_ret);
cl_program create_program_with_binary(cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                                      const size_t* lengths, const unsigned char** binaries, cl_int* binary_status,
                                      cl_int* errcode_ret);
cl_program create_program_with_built_in_kernels(cl_context context, cl_uint num_devices,
                                                const cl_device_id* device_list, const char* kernel_names,
                                                cl_int* errcode_ret);
cl_int retain_program(cl_program program);
cl_int release_program(cl_program program);
cl_kernel clone_kernel(cl_kernel source_kernel, cl_int* errcode_ret);
cl_int retain_kernel(cl_kernel kernel);
cl_int release_kernel(cl_kernel kernel);
cl_context create_context(const cl_context_properties* properties, cl_uint num_devices, const cl_device_id* devices,
                          void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*), void* user_data,
                          cl_int* errcode_ret);
cl_context create_context_from_type(const cl_context_properties* properties, cl_device_type device_type,
                                    void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*),
                                    void* user_data, cl_int* errcode_ret);
cl_int retain_context(cl_context context);
cl_int release_context(cl_context context);

// Every program the app gets (created, or linked by clLinkProgram): counted from now on
// (app_holds.hpp), and whatever jitcache had recorded at that handle dropped.
void program_made(cl_program program);
// After the app released a kernel (app_holds.hpp's account of it): the reference jitcache held for
// a kernel of a shadow is dropped, and what jitcache keeps for a program the app let go entirely.
void forget_program_of_released_kernel(const KernelRelease& release);

}  // namespace jitcache::opencl
