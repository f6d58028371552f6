// The functions the hooks forward to: the real loader's (preload, found with dlsym(RTLD_NEXT))
// or the next layer's dispatch table (ICD layer). Hooks never call OpenCL by name.
#pragma once

#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

#define JITCACHE_OPENCL_FUNCTIONS(X)     \
  X(clGetPlatformInfo)                   \
  X(clGetDeviceInfo)                     \
  X(clCreateProgramWithSource)           \
  X(clCreateProgramWithIL)               \
  X(clCreateProgramWithBinary)           \
  X(clSetProgramSpecializationConstant)  \
  X(clBuildProgram)                      \
  X(clGetProgramInfo)                    \
  X(clGetProgramBuildInfo)               \
  X(clRetainProgram)                     \
  X(clReleaseProgram)                    \
  X(clCreateKernel)                      \
  X(clCreateKernelsInProgram)            \
  X(clGetKernelInfo)                     \
  X(clReleaseKernel)

struct NextFunctions {
#define JITCACHE_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_DECLARE_POINTER)
#undef JITCACHE_DECLARE_POINTER
};

// The table in use. Filled on first use from dlsym(RTLD_NEXT) unless set_next_functions() ran.
const NextFunctions& next();
void set_next_functions(const NextFunctions& functions);

}  // namespace jitcache::opencl
