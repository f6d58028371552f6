// A program with a kernel whose name is longer than a file name may be (253 bytes and more) next
// to a short one; the app runs only the short one, which PoCL handles. Reading the program's
// binaries makes PoCL link every kernel's work-group function into "<name>.so" and abort
// ("Final linking of kernel ... failed"), so jitcache must not read them (driver_quirks.hpp,
// pocl-long-kernel-name). Prints the checked result.
//
//   opencl_long_kernel_name [NAME_LENGTH]   (default 260)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_app.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using cl_app::check;
using cl_app::fail;

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "opencl_long_kernel_name";
  const size_t length = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 260;
  std::string long_name = "long_";
  while (long_name.size() < length) long_name += static_cast<char>('a' + long_name.size() % 26);
  const std::string source = "__kernel void " + long_name + "(__global int* d) { d[get_global_id(0)] += 5; }\n"
                             "__kernel void add_seven(__global int* d) { d[get_global_id(0)] += 7; }\n";
  const cl_app::FirstDevice cl = cl_app::first_device_or_exit();
  cl_device_id device = cl.device;
  cl_context context = cl.context;
  cl_command_queue queue = cl.queue;
  cl_int status = CL_SUCCESS;
  const char* text = source.c_str();
  cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, "add_seven", &status);
  check(status, "clCreateKernel");

  constexpr size_t kCount = 256;
  std::vector<cl_int> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<cl_int>(i);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, kCount * sizeof(cl_int),
                                 data.data(), &status);
  check(status, "clCreateBuffer");
  check(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), "clSetKernelArg");
  size_t global = kCount;
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "clEnqueueNDRange");
  check(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, kCount * sizeof(cl_int), data.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  bool correct = true;
  for (size_t i = 0; i < kCount; ++i) correct = correct && data[i] == static_cast<cl_int>(i) + 7;
  size_t kernels = 0;
  check(clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof kernels, &kernels, nullptr), "CL_PROGRAM_NUM_KERNELS");
  std::printf("kernels=%zu add_seven %s\n", kernels, correct ? "correct" : "WRONG");
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return correct ? 0 : 1;
}
