// After a cache hit the app's program was never built; its shadow was. Calls that need the built
// program go to the shadow, and the shadow never shows through to the app.
#include "shim/opencl/app_holds.hpp"
#include "shim/opencl/binary_capture.hpp"
#include "shim/opencl/deferred_compile.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_registry.hpp"
#include "shim/opencl/recorded_queries.hpp"

namespace jitcache::opencl {
namespace {

// Program queries answered by the built program; the rest (source, IL, context, devices,
// reference count) describe the app's own object.
bool answered_by_built_program(cl_program_info param) {
  switch (param) {
    case CL_PROGRAM_BINARY_SIZES:
    case CL_PROGRAM_BINARIES:
    case CL_PROGRAM_NUM_KERNELS:
    case CL_PROGRAM_KERNEL_NAMES:
    case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
    case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT:
      return true;
    default:
      return false;
  }
}

// A kernel of the shadow keeps the app's program alive, as a kernel of the program itself would
// (CL_KERNEL_PROGRAM hands the app's program out): jitcache's reference, dropped with the kernel.
void adopt_kernel(cl_kernel kernel, cl_program program, bool from_shadow) {
  if (from_shadow) next().clRetainProgram(program);
  kernel_created(kernel, program, from_shadow);
}

}  // namespace

cl_kernel create_kernel(cl_program program, const char* kernel_name, cl_int* errcode_ret) {
  run_deferred_compile(program);  // the driver's own answer (an object has no kernels) needs it
  cl_program shadow = registry().shadow_of(program);
  cl_kernel kernel = next().clCreateKernel(shadow ? shadow : program, kernel_name, errcode_ret);
  if (kernel) adopt_kernel(kernel, program, shadow != nullptr);
  return kernel;
}

cl_int create_kernels_in_program(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                                 cl_uint* num_kernels_ret) {
  run_deferred_compile(program);
  cl_program shadow = registry().shadow_of(program);
  // The app's own counter goes to the driver untouched (it decides what a failure leaves in it).
  cl_uint local_count = 0;
  cl_uint* count = num_kernels_ret ? num_kernels_ret : &local_count;
  cl_int status = next().clCreateKernelsInProgram(shadow ? shadow : program, num_kernels, kernels, count);
  if (status == CL_SUCCESS && kernels) {
    for (cl_uint i = 0; i < *count && i < num_kernels; ++i) adopt_kernel(kernels[i], program, shadow != nullptr);
  }
  return status;
}

cl_int get_program_info(cl_program program, cl_program_info param_name, size_t param_value_size, void* param_value,
                        size_t* param_value_size_ret) {
  cl_int answered = CL_SUCCESS;
  if (answer_deferred_program_info(program, param_name, param_value_size, param_value, param_value_size_ret, answered) ||
      answer_parked_binary_query(program, param_name, param_value_size, param_value, param_value_size_ret, answered)) {
    return answered;
  }
  if (answered_by_built_program(param_name)) run_deferred_compile(program);
  cl_program shadow = answered_by_built_program(param_name) ? registry().shadow_of(program) : nullptr;
  return next().clGetProgramInfo(shadow ? shadow : program, param_name, param_value_size, param_value,
                                 param_value_size_ret);
}

cl_int get_program_build_info(cl_program program, cl_device_id device, cl_program_build_info param_name,
                              size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  cl_int answered = CL_SUCCESS;
  if (answer_deferred_build_info(program, device, param_name, param_value_size, param_value, param_value_size_ret,
                                 answered)) {
    return answered;
  }
  if (answer_recorded_build_info(program, device, param_name, param_value_size, param_value, param_value_size_ret,
                                 answered)) {
    return answered;
  }
  run_deferred_compile(program);
  cl_program shadow = registry().shadow_of(program);
  return next().clGetProgramBuildInfo(shadow ? shadow : program, device, param_name, param_value_size, param_value,
                                      param_value_size_ret);
}

cl_int get_kernel_info(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void* param_value,
                       size_t* param_value_size_ret) {
  cl_int answered = CL_SUCCESS;
  if (answer_recorded_kernel_info(kernel, param_name, param_value_size, param_value, param_value_size_ret, answered)) {
    return answered;
  }
  cl_int status = next().clGetKernelInfo(kernel, param_name, param_value_size, param_value, param_value_size_ret);
  if (status == CL_SUCCESS && param_name == CL_KERNEL_PROGRAM && param_value &&
      param_value_size >= sizeof(cl_program)) {
    // A shadow may serve several of the app's programs: the kernel knows which one made it.
    auto* program = static_cast<cl_program*>(param_value);
    if (cl_program app_program = program_of_kernel(kernel)) *program = app_program;
    else if (cl_program shadow_owner = registry().program_of_shadow(*program)) *program = shadow_owner;
  }
  return status;
}

cl_int get_kernel_arg_info(cl_kernel kernel, cl_uint arg_index, cl_kernel_arg_info param_name, size_t param_value_size,
                           void* param_value, size_t* param_value_size_ret) {
  cl_int answered = CL_SUCCESS;
  if (answer_recorded_arg_info(kernel, arg_index, param_name, param_value_size, param_value, param_value_size_ret,
                               answered)) {
    return answered;
  }
  return next().clGetKernelArgInfo(kernel, arg_index, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_kernel clone_kernel(cl_kernel source_kernel, cl_int* errcode_ret) {
  cl_kernel kernel = next().clCloneKernel(source_kernel, errcode_ret);
  bool from_shadow = false;
  if (cl_program program = kernel ? program_of_kernel(source_kernel, &from_shadow) : nullptr) {
    adopt_kernel(kernel, program, from_shadow);
  }
  return kernel;
}

cl_int retain_kernel(cl_kernel kernel) {
  cl_int status = next().clRetainKernel(kernel);
  if (status == CL_SUCCESS) kernel_retained(kernel);
  return status;
}

cl_int release_kernel(cl_kernel kernel) {
  capture_released_parked();
  cl_int status = next().clReleaseKernel(kernel);
  if (status == CL_SUCCESS) forget_program_of_released_kernel(kernel_released(kernel));
  return status;
}

}  // namespace jitcache::opencl
