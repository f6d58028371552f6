// Builds the OpenCL C file given on the command line (with optional build options), runs its
// kernel `compute(__global int* out)` over 64 items and prints the results: the app the key
// completeness and differential tests run with and without jitcache to compare outputs. With
// --queries it first asks what a served program answers from the cache's record (the kernel's
// attributes, its first argument's name, the build log) and prints the answers to stderr.
//
//   kernel_file_app SOURCE [OPTIONS [--queries]]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr size_t kItems = 64;

int fail(const char* what, cl_int status) {
  std::fprintf(stderr, "kernel_file_app: %s failed (%d)\n", what, status);
  return 1;
}

// Each answer on stderr (the driver may answer a program loaded from a binary otherwise).
void ask_recorded_queries(cl_program program, cl_device_id device, cl_kernel kernel) {
  std::vector<char> text(65536);
  cl_int status = clGetKernelInfo(kernel, CL_KERNEL_ATTRIBUTES, text.size() - 1, text.data(), nullptr);
  std::fprintf(stderr, "CL_KERNEL_ATTRIBUTES (%d): %s\n", status, status == CL_SUCCESS ? text.data() : "");
  text.assign(text.size(), '\0');
  status = clGetKernelArgInfo(kernel, 0, CL_KERNEL_ARG_NAME, text.size() - 1, text.data(), nullptr);
  std::fprintf(stderr, "CL_KERNEL_ARG_NAME (%d): %s\n", status, status == CL_SUCCESS ? text.data() : "");
  text.assign(text.size(), '\0');
  status = clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, text.size() - 1, text.data(), nullptr);
  std::fprintf(stderr, "CL_PROGRAM_BUILD_LOG (%d): %s\n", status, status == CL_SUCCESS ? text.data() : "");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kernel_file_app SOURCE [OPTIONS]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const std::string options = argc > 2 ? argv[2] : "";

  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_int status = clGetPlatformIDs(1, &platform, nullptr);
  if (status != CL_SUCCESS) return fail("clGetPlatformIDs", status);
  status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
  if (status != CL_SUCCESS) return fail("clGetDeviceIDs", status);
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) return fail("clCreateContext", status);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  if (status != CL_SUCCESS) return fail("clCreateCommandQueue", status);

  const char* text_ptr = source.c_str();
  cl_program program = clCreateProgramWithSource(context, 1, &text_ptr, nullptr, &status);
  if (status != CL_SUCCESS) return fail("clCreateProgramWithSource", status);
  status = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::vector<char> log(65536);
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log.size() - 1, log.data(), nullptr);
    std::fprintf(stderr, "%s\n", log.data());
    std::printf("build failed\n");  // a build failure is an output too: it must match the plain run
    return 0;
  }
  cl_kernel kernel = clCreateKernel(program, "compute", &status);
  if (status != CL_SUCCESS) return fail("clCreateKernel", status);
  if (argc > 3 && std::string(argv[3]) == "--queries") ask_recorded_queries(program, device, kernel);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, kItems * sizeof(cl_int), nullptr, &status);
  if (status != CL_SUCCESS) return fail("clCreateBuffer", status);
  clSetKernelArg(kernel, 0, sizeof out, &out);
  status = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &kItems, nullptr, 0, nullptr, nullptr);
  if (status != CL_SUCCESS) return fail("clEnqueueNDRangeKernel", status);
  std::vector<cl_int> values(kItems);
  status = clEnqueueReadBuffer(queue, out, CL_TRUE, 0, kItems * sizeof(cl_int), values.data(), 0, nullptr, nullptr);
  if (status != CL_SUCCESS) return fail("clEnqueueReadBuffer", status);
  for (size_t i = 0; i < kItems; ++i) std::printf("%d%c", values[i], i + 1 == kItems ? '\n' : ' ');
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
