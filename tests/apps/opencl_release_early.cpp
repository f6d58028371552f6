// An app that builds many programs and lets each one's kernel and program go right after enqueueing
// it, without waiting for the queue (pyopencl scripts and generated kernels do this): the driver
// still holds the kernel for its queued command when the app releases it, and may hand a freed
// program's handle to the next program it makes. Options:
//   --finish-each     clFinish after each enqueue (the driver is done with each kernel at its release)
//   --binary-between  between two source programs, one made from a binary and run (its handle may
//                     be a freed source program's: it must never be served that program's binary)
// Prints the checked sum of the buffer all kernels updated, and how many source programs were
// built (stderr: "source builds N").
//
//   opencl_release_early [PROGRAMS] [--finish-each] [--binary-between]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cl_app.hpp"

namespace {

constexpr size_t kCount = 64;
const char* kXor = "__kernel void flip(__global int* d) { size_t i = get_global_id(0); d[i] = d[i] ^ 0x55; }\n";

using cl_app::binary_of;
using cl_app::check;

std::string source_of(int index) {
  return "__kernel void step" + std::to_string(index) + "(__global int* d) { size_t i = get_global_id(0); d[i] = d[i] * " +
         std::to_string(index % 5 + 2) + " + " + std::to_string(index) + "; }\n";
}

// Builds `program`, runs its only kernel on `buffer` and lets kernel and program go.
void run_and_release(cl_command_queue queue, cl_device_id device, cl_program program, const char* kernel_name,
                     cl_mem buffer, bool finish) {
  check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, kernel_name, &status);
  check(status, "clCreateKernel");
  check(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), "clSetKernelArg");
  size_t global = kCount;
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "enqueue");
  if (finish) check(clFinish(queue), "clFinish");
  check(clReleaseKernel(kernel), "clReleaseKernel");
  check(clReleaseProgram(program), "clReleaseProgram");
}

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "opencl_release_early";
  int programs = 30;
  bool finish = false;
  bool binary_between = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--finish-each") == 0) finish = true;
    else if (std::strcmp(argv[i], "--binary-between") == 0) binary_between = true;
    else programs = std::atoi(argv[i]);
  }
  cl_app::FirstDevice first = cl_app::first_device_or_exit();
  int source_builds = 0;
  std::vector<unsigned char> binary;
  if (binary_between) {
    binary = binary_of(first.context, first.device, kXor);
    ++source_builds;
  }
  std::vector<cl_int> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<cl_int>(i);
  cl_int status = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(first.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(cl_int) * kCount,
                                 data.data(), &status);
  check(status, "clCreateBuffer");
  for (int index = 0; index < programs; ++index) {
    const std::string source = source_of(index);
    const char* text = source.c_str();
    cl_program program = clCreateProgramWithSource(first.context, 1, &text, nullptr, &status);
    check(status, "clCreateProgramWithSource");
    run_and_release(first.queue, first.device, program, ("step" + std::to_string(index)).c_str(), buffer, finish);
    ++source_builds;
    if (!binary_between) continue;
    const unsigned char* bytes = binary.data();
    size_t size = binary.size();
    cl_program from_binary = clCreateProgramWithBinary(first.context, 1, &first.device, &size, &bytes, nullptr, &status);
    check(status, "clCreateProgramWithBinary");
    run_and_release(first.queue, first.device, from_binary, "flip", buffer, finish);
  }
  check(clEnqueueReadBuffer(first.queue, buffer, CL_TRUE, 0, sizeof(cl_int) * kCount, data.data(), 0, nullptr,
                            nullptr),
        "read");
  long long sum = 0;
  for (size_t i = 0; i < kCount; ++i) sum += static_cast<long long>(data[i]) * static_cast<long long>(i + 1);
  std::printf("sum %lld\n", sum);
  std::fprintf(stderr, "source builds %d\n", source_builds);
  clReleaseMemObject(buffer);
  clReleaseCommandQueue(first.queue);
  clReleaseContext(first.context);
  return 0;
}
