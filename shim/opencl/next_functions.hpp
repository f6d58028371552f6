// The functions the hooks forward to: the real loader's (found by the platform's
// find_real_function) or the next layer's dispatch table (ICD layer). Hooks never call OpenCL by
// name.
#pragma once

#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

#define JITCACHE_OPENCL_FUNCTIONS(X)     \
  X(clGetPlatformInfo)                   \
  X(clGetDeviceInfo)                     \
  X(clGetContextInfo)                    \
  X(clCreateContext)                     \
  X(clCreateContextFromType)             \
  X(clRetainContext)                     \
  X(clReleaseContext)                    \
  X(clCreateProgramWithSource)           \
  X(clCreateProgramWithIL)               \
  X(clCreateProgramWithBinary)           \
  X(clCreateProgramWithBuiltInKernels)   \
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
  X(clCloneKernel)                       \
  X(clRetainKernel)                      \
  X(clGetKernelInfo)                     \
  X(clGetKernelArgInfo)                  \
  X(clReleaseKernel)

struct NextFunctions {
#define JITCACHE_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_DECLARE_POINTER)
#undef JITCACHE_DECLARE_POINTER
};

// The real OpenCL loader's function of that name, or nullptr. One per platform:
// shim/linux (dlsym(RTLD_NEXT), else the loaded libOpenCL however it was loaded), shim/windows
// (GetProcAddress on OpenCL.dll).
void* find_real_function(const char* name);

// What the hooks call: the layer's target table once a layer was initialised, else the loader's
// exports behind this library (find_real_function, resolved on use until every required entry was
// found: a null is never cached). No entry is ever null: one nobody exports fails the way a
// loader fails for an object it cannot dispatch (CL_INVALID_PROGRAM, ...).
const NextFunctions& next();

// The loader's exports behind this library, whatever the layer does: what the preload exports
// forward to when a layer owns the hooks.
const NextFunctions& loader_functions();

// Installs the layer's target table; from then on next() returns it.
void set_layer_target(const NextFunctions& functions);

}  // namespace jitcache::opencl
