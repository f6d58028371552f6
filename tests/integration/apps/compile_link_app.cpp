// Builds a kernel the separate-compilation way: clCompileProgram of two sources (one including a
// header handed over through input_headers), then clLinkProgram, then runs it.
// Usage: compile_link_app <params.h file> <SCALE the header defines>
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char* kMainSource = R"CL(
#include "params.h"
int offset_of(int i);
__kernel void combine(__global int* out) {
  int i = get_global_id(0);
  out[i] = i * SCALE + offset_of(i);
}
)CL";

const char* kHelperSource = R"CL(
int offset_of(int i) { return (i % 7) * 100; }
)CL";

int fail(const char* what, cl_int status) {
  std::fprintf(stderr, "compile_link_app: %s failed (%d)\n", what, status);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compile_link_app <params.h> <expected SCALE>\n");
    return 2;
  }
  std::ifstream header_file(argv[1]);
  std::stringstream header_text;
  header_text << header_file.rdbuf();
  std::string header = header_text.str();
  const int expected_scale = std::atoi(argv[2]);

  cl_platform_id platform;
  cl_device_id device;
  cl_int status = clGetPlatformIDs(1, &platform, nullptr);
  if (status != CL_SUCCESS) return fail("clGetPlatformIDs", status);
  if ((status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr)) != CL_SUCCESS) {
    return fail("clGetDeviceIDs", status);
  }
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  if (!context) return fail("clCreateContext", status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &status);

  const char* header_source = header.c_str();
  cl_program header_program = clCreateProgramWithSource(context, 1, &header_source, nullptr, &status);
  cl_program main_program = clCreateProgramWithSource(context, 1, &kMainSource, nullptr, &status);
  cl_program helper_program = clCreateProgramWithSource(context, 1, &kHelperSource, nullptr, &status);
  if (!header_program || !main_program || !helper_program) return fail("clCreateProgramWithSource", status);

  const char* include_name = "params.h";
  status = clCompileProgram(main_program, 1, &device, "-cl-std=CL1.2", 1, &header_program, &include_name, nullptr,
                            nullptr);
  if (status != CL_SUCCESS) return fail("clCompileProgram main", status);
  clReleaseProgram(header_program);  // the compile has what it needs
  status = clCompileProgram(helper_program, 1, &device, "-cl-std=CL1.2", 0, nullptr, nullptr, nullptr, nullptr);
  if (status != CL_SUCCESS) return fail("clCompileProgram helper", status);

  cl_program inputs[] = {main_program, helper_program};
  cl_program linked = clLinkProgram(context, 1, &device, "", 2, inputs, nullptr, nullptr, &status);
  if (!linked || status != CL_SUCCESS) return fail("clLinkProgram", status);
  clReleaseProgram(main_program);
  clReleaseProgram(helper_program);

  cl_kernel kernel = clCreateKernel(linked, "combine", &status);
  if (!kernel) return fail("clCreateKernel", status);
  constexpr int kCount = 512;
  std::vector<int> output(kCount, 0);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof(int) * kCount, nullptr, &status);
  clSetKernelArg(kernel, 0, sizeof out, &out);
  size_t global = kCount;
  if ((status = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr)) !=
      CL_SUCCESS) {
    return fail("clEnqueueNDRangeKernel", status);
  }
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof(int) * kCount, output.data(), 0, nullptr, nullptr);

  long long sum = 0;
  bool correct = true;
  for (int i = 0; i < kCount; ++i) {
    sum += output[i];
    correct = correct && output[i] == i * expected_scale + (i % 7) * 100;
  }
  std::printf("combine: scale=%d sum=%lld\n", expected_scale, sum);
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(linked);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (!correct) return fail("result check", 0);
  std::printf("all results correct\n");
  return 0;
}
