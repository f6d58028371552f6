// The functions the hooks forward to: the real loader's (preload, found with dlsym(RTLD_NEXT))
// or the layer's target dispatch table (ICD layer). Hooks never call OpenCL by name.
#pragma once

#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

#define JITCACHE_OPENCL_FUNCTIONS(X)     \
  X(clGetPlatformInfo)                   \
  X(clGetDeviceInfo)                     \
  X(clGetContextInfo)                    \
  X(clCreateProgramWithSource)           \
  X(clCreateProgramWithIL)               \
  X(clCreateProgramWithBinary)           \
  X(clSetProgramSpecializationConstant)  \
  X(clBuildProgram)                      \
  X(clCompileProgram)                    \
  X(clLinkProgram)                       \
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

// What the hooks call: the layer's target table once a layer was initialised, else the loader's
// exports behind this library (dlsym(RTLD_NEXT), resolved on first use).
const NextFunctions& next();

// The loader's exports behind this library, whatever the layer does: what the preload exports
// forward to when a layer owns the hooks.
const NextFunctions& loader_functions();

// Installs the layer's target table; from then on next() returns it.
void set_layer_target(const NextFunctions& functions);

}  // namespace jitcache::opencl
