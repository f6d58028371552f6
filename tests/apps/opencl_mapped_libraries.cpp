// Builds and runs one program, then prints every shared library mapped into this process
// (/proc/self/maps), one "mapped: <path>" line each: the tier-loading test (issue 19) checks that the
// shim maps libcrypto and libhiredis only where JITCACHE_PACKS or JITCACHE_REMOTE asks for them.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_app.hpp"

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace {

const char* kSource = "__kernel void twice(__global int* d) { size_t i = get_global_id(0); d[i] = d[i] * 2; }\n";
constexpr size_t kCount = 64;

using cl_app::check;

long long build_and_run(const cl_app::FirstDevice& device) {
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(device.context, 1, &kSource, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device.device, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, "twice", &status);
  check(status, "clCreateKernel");
  std::vector<int> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<int>(i);
  cl_mem buffer = clCreateBuffer(device.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(int) * kCount,
                                 data.data(), &status);
  check(status, "clCreateBuffer");
  check(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), "clSetKernelArg");
  size_t global = kCount;
  check(clEnqueueNDRangeKernel(device.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
        "clEnqueueNDRangeKernel");
  check(clEnqueueReadBuffer(device.queue, buffer, CL_TRUE, 0, sizeof(int) * kCount, data.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  long long sum = 0;
  for (int value : data) sum += value;
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  return sum;
}

}  // namespace

int main() {
  cl_app::program_name = "opencl_mapped_libraries";
  const cl_app::FirstDevice device = cl_app::first_device_or_exit();
  std::printf("twice sum=%lld\n", build_and_run(device));
  clReleaseCommandQueue(device.queue);
  clReleaseContext(device.context);

  std::set<std::string> libraries;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const std::size_t path = line.find('/');
    if (path != std::string::npos && line.find(".so", path) != std::string::npos) libraries.insert(line.substr(path));
  }
  if (libraries.empty()) cl_app::fail("/proc/self/maps lists no shared library", -1);
  for (const std::string& library : libraries) std::printf("mapped: %s\n", library.c_str());
  return 0;
}
