// The set-up the OpenCL test apps share: the first device of the first platform, a context on it
// and, when asked, a queue.
#pragma once

#include <CL/cl.h>

struct FirstDevice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};

// CL_SUCCESS, or the failing call's status with `*failed_call` naming it.
inline cl_int open_first_device(FirstDevice* out, const char** failed_call, bool with_queue = true) {
  cl_int status = clGetPlatformIDs(1, &out->platform, nullptr);
  if (status != CL_SUCCESS) return *failed_call = "clGetPlatformIDs", status;
  status = clGetDeviceIDs(out->platform, CL_DEVICE_TYPE_ALL, 1, &out->device, nullptr);
  if (status != CL_SUCCESS) return *failed_call = "clGetDeviceIDs", status;
  out->context = clCreateContext(nullptr, 1, &out->device, nullptr, nullptr, &status);
  if (!out->context) return *failed_call = "clCreateContext", status;
  if (!with_queue) return CL_SUCCESS;
  out->queue = clCreateCommandQueueWithProperties(out->context, out->device, nullptr, &status);
  if (!out->queue) return *failed_call = "clCreateCommandQueueWithProperties", status;
  return CL_SUCCESS;
}
