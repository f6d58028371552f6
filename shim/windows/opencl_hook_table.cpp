#include "shim/windows/opencl_hook_table.hpp"

#include <cstring>

#include "shim/opencl/hooks.hpp"

namespace jitcache::windows {
namespace {

namespace cl = jitcache::opencl;

// x64 has one calling convention, so the hooks (declared with the API's own signatures) can
// stand in for the exports directly: the same functions the Linux exports forward to.
const Replacement kOpenClHooks[] = {  // sized by its entries: a spare one would be a null name
    {"clCreateProgramWithSource", reinterpret_cast<void*>(&cl::create_program_with_source)},
    {"clCreateProgramWithIL", reinterpret_cast<void*>(&cl::create_program_with_il)},
    {"clSetProgramSpecializationConstant", reinterpret_cast<void*>(&cl::set_program_specialization_constant)},
    {"clBuildProgram", reinterpret_cast<void*>(&cl::build_program)},
    {"clCreateKernel", reinterpret_cast<void*>(&cl::create_kernel)},
    {"clCreateKernelsInProgram", reinterpret_cast<void*>(&cl::create_kernels_in_program)},
    {"clGetProgramInfo", reinterpret_cast<void*>(&cl::get_program_info)},
    {"clGetProgramBuildInfo", reinterpret_cast<void*>(&cl::get_program_build_info)},
    {"clGetKernelInfo", reinterpret_cast<void*>(&cl::get_kernel_info)},
    {"clGetKernelArgInfo", reinterpret_cast<void*>(&cl::get_kernel_arg_info)},
    {"clCreateProgramWithBinary", reinterpret_cast<void*>(&cl::create_program_with_binary)},
    {"clCreateProgramWithBuiltInKernels", reinterpret_cast<void*>(&cl::create_program_with_built_in_kernels)},
    {"clRetainProgram", reinterpret_cast<void*>(&cl::retain_program)},
    {"clReleaseProgram", reinterpret_cast<void*>(&cl::release_program)},
    {"clCloneKernel", reinterpret_cast<void*>(&cl::clone_kernel)},
    {"clRetainKernel", reinterpret_cast<void*>(&cl::retain_kernel)},
    {"clReleaseKernel", reinterpret_cast<void*>(&cl::release_kernel)},
    {"clCreateContext", reinterpret_cast<void*>(&cl::create_context)},
    {"clCreateContextFromType", reinterpret_cast<void*>(&cl::create_context_from_type)},
    {"clRetainContext", reinterpret_cast<void*>(&cl::retain_context)},
    {"clReleaseContext", reinterpret_cast<void*>(&cl::release_context)},
};

}  // namespace

std::span<const Replacement> opencl_replacements() { return kOpenClHooks; }

void* opencl_hook_for(const char* name) {
  for (const Replacement& hook : kOpenClHooks) {
    if (std::strcmp(hook.name, name) == 0) return hook.function;
  }
  return nullptr;
}

}  // namespace jitcache::windows
