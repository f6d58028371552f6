// Builds and runs two different programs, optionally removing a directory between the two builds
// (the cache root vanishing under a running app). Prints each kernel's checked result, then with
// --print-mapped-libraries every shared library mapped into the process ("mapped: <path>" lines,
// from /proc/self/maps): the shim maps libcrypto and libhiredis only where packs or a remote are
// set (tests/integration/tier_loading_test.cpp).
//
//   opencl_two_builds [--remove-between DIR] [--print-mapped-libraries]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_app.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr size_t kCount = 256;

const char* kFirst = "__kernel void scale(__global int* d) { size_t i = get_global_id(0); d[i] = d[i] * 3 + 1; }\n";
const char* kSecond = "__kernel void square(__global int* d) { size_t i = get_global_id(0); d[i] = d[i] * d[i]; }\n";

using cl_app::check;
using cl_app::fail;

// Builds `source`, runs its one kernel over 0..kCount-1 and returns the sum of the results.
long long build_and_run(const cl_app::FirstDevice& device, const char* source, const char* kernel_name) {
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(device.context, 1, &source, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device.device, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, kernel_name, &status);
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
  check(clEnqueueReadBuffer(device.queue, buffer, CL_TRUE, 0, sizeof(int) * kCount, data.data(), 0, nullptr,
                            nullptr),
        "clEnqueueReadBuffer");
  long long sum = 0;
  for (int value : data) sum += value;
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  return sum;
}

void print_mapped_libraries() {
  std::set<std::string> libraries;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const std::size_t path = line.find('/');
    if (path != std::string::npos && line.find(".so", path) != std::string::npos) libraries.insert(line.substr(path));
  }
  if (libraries.empty()) fail("/proc/self/maps lists no shared library", -1);
  for (const std::string& library : libraries) std::printf("mapped: %s\n", library.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "opencl_two_builds";
  std::string remove_between;
  bool print_mapped = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--remove-between" && i + 1 < argc) remove_between = argv[++i];
    if (std::string(argv[i]) == "--print-mapped-libraries") print_mapped = true;
  }
  const cl_app::FirstDevice device = cl_app::first_device_or_exit();

  std::printf("scale sum=%lld\n", build_and_run(device, kFirst, "scale"));
  if (!remove_between.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(remove_between, ignored);
  }
  std::printf("square sum=%lld\n", build_and_run(device, kSecond, "square"));
  clReleaseCommandQueue(device.queue);
  clReleaseContext(device.context);
  if (print_mapped) print_mapped_libraries();
  return 0;
}
