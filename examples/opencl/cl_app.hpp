// What the repo's small OpenCL programs share (the examples, bench/build_timer and the test apps):
// the first device of the first platform (or CL_APP_PLATFORM's) with a context and a queue, exit-on-error checks and
// reading a kernel file. A program that defines CL_TARGET_OPENCL_VERSION 120 gets OpenCL 1.2 calls
// only (the Windows tests run under Wine's OpenCL.dll, which forwards 1.2 entry points only).
#pragma once

#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cl_app {

// The name every failure message starts with; main sets it.
inline const char* program_name = "opencl app";

[[noreturn]] inline void fail(const std::string& what, cl_int status) {
  std::fprintf(stderr, "%s: %s failed (%d)\n", program_name, what.c_str(), status);
  std::exit(1);
}

inline void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS) fail(what, status);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("reading " + path, -1);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The device's binary of `source`, built from a program made and released here (test apps that
// load programs from binaries).
inline std::vector<unsigned char> binary_of(cl_context context, cl_device_id device, const char* source) {
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  size_t size = 0;
  check(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr), "binary size");
  std::vector<unsigned char> binary(size);
  unsigned char* pointer = binary.data();
  check(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr), "binaries");
  check(clReleaseProgram(program), "clReleaseProgram");
  return binary;
}

struct FirstDevice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};

// CL_SUCCESS, or the failing call's status with `*failed_call` naming it: for programs that must
// not exit (plugins) or report failures their own way.
// CL_APP_PLATFORM, when set, picks the first platform whose name contains it instead (the tests
// choose a driver in a process that loaded several).
inline cl_int open_first_device(FirstDevice* out, const char** failed_call, bool with_queue = true) {
  cl_platform_id platforms[16];
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(16, platforms, &count);
  if (status != CL_SUCCESS) return *failed_call = "clGetPlatformIDs", status;
  out->platform = platforms[0];
  if (const char* wanted = std::getenv("CL_APP_PLATFORM")) {
    out->platform = nullptr;
    for (cl_uint i = 0; i < count && i < 16 && !out->platform; ++i) {
      char name[256] = {};
      clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
      if (std::string(name).find(wanted) != std::string::npos) out->platform = platforms[i];
    }
    if (!out->platform) return *failed_call = "finding the CL_APP_PLATFORM platform", CL_INVALID_PLATFORM;
  }
  status = clGetDeviceIDs(out->platform, CL_DEVICE_TYPE_ALL, 1, &out->device, nullptr);
  if (status != CL_SUCCESS) return *failed_call = "clGetDeviceIDs", status;
  out->context = clCreateContext(nullptr, 1, &out->device, nullptr, nullptr, &status);
  if (!out->context) return *failed_call = "clCreateContext", status;
  if (!with_queue) return CL_SUCCESS;
#if CL_TARGET_OPENCL_VERSION >= 200
  out->queue = clCreateCommandQueueWithProperties(out->context, out->device, nullptr, &status);
  if (!out->queue) return *failed_call = "clCreateCommandQueueWithProperties", status;
#else
  out->queue = clCreateCommandQueue(out->context, out->device, 0, &status);
  if (!out->queue) return *failed_call = "clCreateCommandQueue", status;
#endif
  return CL_SUCCESS;
}

// The same, exiting with the failing call's name.
inline FirstDevice first_device_or_exit(bool with_queue = true) {
  FirstDevice opened;
  const char* failed_call = "";
  cl_int status = open_first_device(&opened, &failed_call, with_queue);
  if (status != CL_SUCCESS) fail(failed_call, status);
  return opened;
}

}  // namespace cl_app
