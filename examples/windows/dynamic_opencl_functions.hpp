// The OpenCL functions opencl_example calls, as pointers that opencl_dynamic_loader.cpp fills
// with LoadLibraryW(L"OpenCL.dll") + GetProcAddress: the way many Windows apps use OpenCL.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define JITCACHE_EXAMPLE_OPENCL_FUNCTIONS(X) \
  X(clBuildProgram) \
  X(clCreateBuffer) \
  X(clCreateCommandQueue) \
  X(clCreateContext) \
  X(clCreateKernel) \
  X(clCreateKernelsInProgram) \
  X(clCreateProgramWithSource) \
  X(clEnqueueNDRangeKernel) \
  X(clEnqueueReadBuffer) \
  X(clFinish) \
  X(clGetDeviceIDs) \
  X(clGetKernelInfo) \
  X(clGetPlatformIDs) \
  X(clGetPlatformInfo) \
  X(clGetProgramBuildInfo) \
  X(clReleaseCommandQueue) \
  X(clReleaseContext) \
  X(clReleaseKernel) \
  X(clReleaseMemObject) \
  X(clReleaseProgram) \
  X(clSetKernelArg) \
  /* end */

#define JITCACHE_DECLARE_DYNAMIC(name) extern decltype(&::name) dynamic_##name;
JITCACHE_EXAMPLE_OPENCL_FUNCTIONS(JITCACHE_DECLARE_DYNAMIC)
#undef JITCACHE_DECLARE_DYNAMIC
