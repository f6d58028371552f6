// A plugin linked against libOpenCL, as a Python extension or an app's plugin is: the host
// dlopens it with RTLD_LOCAL, so the loader it pulls in is in no global scope. Under LD_PRELOAD
// its OpenCL calls bind to libjitcache.so's exports, which must find that loader anyway.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <vector>

#include "cl_app.hpp"

namespace {

const char* kSource = R"CL(
__kernel void square_minus(__global const int* in, __global int* out, int offset) {
  size_t i = get_global_id(0);
  out[i] = in[i] * in[i] - offset;
}
)CL";

int fail(const char* what, cl_int status) {
  std::fprintf(stderr, "opencl_plugin: %s failed (%d)\n", what, status);
  return 1;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int run_plugin() {
  cl_app::FirstDevice cl;
  const char* failed_call = "";
  cl_int status = cl_app::open_first_device(&cl, &failed_call);
  if (status != CL_SUCCESS) return fail(failed_call, status);
  auto [platform, device, context, queue] = cl;
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &status);
  if (!program) return fail("clCreateProgramWithSource", status);
  if ((status = clBuildProgram(program, 1, &device, "", nullptr, nullptr)) != CL_SUCCESS) {
    return fail("clBuildProgram", status);
  }
  cl_kernel kernel = clCreateKernel(program, "square_minus", &status);
  if (!kernel) return fail("clCreateKernel", status);

  constexpr int kCount = 512;
  std::vector<int> input(kCount), output(kCount, 0);
  for (int i = 0; i < kCount; ++i) input[i] = i % 23;
  cl_mem in = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(int) * kCount, input.data(),
                             &status);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof(int) * kCount, nullptr, &status);
  int offset = 7;
  clSetKernelArg(kernel, 0, sizeof in, &in);
  clSetKernelArg(kernel, 1, sizeof out, &out);
  clSetKernelArg(kernel, 2, sizeof offset, &offset);
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
    correct = correct && output[i] == input[i] * input[i] - offset;
  }
  std::printf("square_minus: sum=%lld\n", sum);
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (!correct) return fail("result check", 0);
  std::printf("all results correct\n");
  return 0;
}
