// The functions the hooks forward to: the real loader's (found by the platform's
// find_real_function) or the next layer's dispatch table (ICD layer). Hooks never call OpenCL by
// name.
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

// The real OpenCL loader's function of that name, or nullptr. One per platform:
// shim/linux (dlsym(RTLD_NEXT)), shim/windows (GetProcAddress on OpenCL.dll).
void* find_real_function(const char* name);

// The table in use. Filled on first use from find_real_function unless set_next_functions() ran.
const NextFunctions& next();
void set_next_functions(const NextFunctions& functions);

}  // namespace jitcache::opencl
