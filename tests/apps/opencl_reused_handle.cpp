// A program freed through its last kernel, then a program created from a binary that the driver
// may give the freed program's handle. Each round: build "scale" from source, make a kernel,
// release the program first and the kernel last (the driver frees the program then), then create
// "square" from its binary, build it and run it. Prints each round's checked sum and how many
// rounds got a reused handle (a cache that still knew the freed handle would key the binary
// program as the freed source and serve "scale" in its place).
//
//   opencl_reused_handle [ROUNDS]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_app.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr size_t kCount = 64;
const char* kScale = "__kernel void scale(__global int* d) { size_t i = get_global_id(0); d[i] = d[i] * 3 + 1; }\n";
const char* kSquare = "__kernel void square(__global int* d) { size_t i = get_global_id(0); d[i] = d[i] * d[i]; }\n";

using cl_app::binary_of;
using cl_app::check;
using cl_app::fail;

long long run_square(cl_context context, cl_command_queue queue, cl_program program) {
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, "square", &status);
  check(status, "clCreateKernel(square)");
  std::vector<int> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<int>(i);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(int) * kCount,
                                 data.data(), &status);
  check(status, "clCreateBuffer");
  check(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), "clSetKernelArg");
  size_t global = kCount;
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "enqueue");
  check(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, sizeof(int) * kCount, data.data(), 0, nullptr, nullptr),
        "read");
  long long sum = 0;
  for (int value : data) sum += value;
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "opencl_reused_handle";
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 8;
  const cl_app::FirstDevice cl = cl_app::first_device_or_exit();
  cl_device_id device = cl.device;
  cl_context context = cl.context;
  cl_command_queue queue = cl.queue;
  cl_int status = CL_SUCCESS;
  const std::vector<unsigned char> square = binary_of(context, device, kSquare);

  int reused = 0;
  for (int round = 0; round < rounds; ++round) {
    cl_program source_program = clCreateProgramWithSource(context, 1, &kScale, nullptr, &status);
    check(status, "clCreateProgramWithSource(scale)");
    check(clBuildProgram(source_program, 1, &device, "", nullptr, nullptr), "clBuildProgram(scale)");
    cl_kernel kernel = clCreateKernel(source_program, "scale", &status);
    check(status, "clCreateKernel(scale)");
    clReleaseProgram(source_program);  // the kernel still holds it
    clReleaseKernel(kernel);           // the driver frees the program now

    const unsigned char* bytes = square.data();
    size_t length = square.size();
    cl_program binary_program = clCreateProgramWithBinary(context, 1, &device, &length, &bytes, nullptr, &status);
    check(status, "clCreateProgramWithBinary(square)");
    if (binary_program == source_program) ++reused;
    check(clBuildProgram(binary_program, 1, &device, "", nullptr, nullptr), "clBuildProgram(square binary)");
    std::printf("round %d: %lld\n", round, run_square(context, queue, binary_program));
    clReleaseProgram(binary_program);
  }
  std::fprintf(stderr, "reused handles: %d\n", reused);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
