// The OpenCL hooks, with the API's own signatures. Both injection paths (LD_PRELOAD exports,
// the ICD layer's dispatch table) point at these same functions.
#pragma once

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
cl_int release_program(cl_program program);
cl_int release_kernel(cl_kernel kernel);
// After the app released a kernel: a parked program (binary_capture.hpp) that only the shim still
// holds is stored, and what the shim keeps for it dropped.
void forget_if_only_parked(cl_program program);
// Drivers that count a kernel's reference in CL_PROGRAM_REFERENCE_COUNT (PoCL) keep a program the app
// released alive until its last kernel goes, then free it, and may give its handle to the next
// program they create, from a binary say, which the shim does not track. The record of the freed
// program must go with it, or that program would be keyed (and served) as the freed one's source.
// Learned at the first direct clCreateKernel from the count before and after.
void learn_whether_kernels_hold_their_program(cl_uint references_before, cl_uint references_after);
bool kernel_references_known();  // learned once: later kernels cost no extra driver call
// Before the last release of a kernel of `program`: true when the driver frees `program` with it.
bool freed_with_its_last_kernel(cl_program program);
// After that release: drops what the shim kept for the freed program (never calls the driver on it).
void forget_freed_program(cl_program program);
cl_uint reference_count(cl_program program);

}  // namespace jitcache::opencl
