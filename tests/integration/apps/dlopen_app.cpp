// An app that never links libOpenCL: it dlopens the ICD loader and calls every OpenCL function
// through a dlsym'ed pointer, as OpenCV and clew-based apps do. LD_PRELOAD interposition cannot
// see these calls; the ICD layer can.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>

#include <cstdio>
#include <vector>

namespace {

const char* kSource = R"CL(
__kernel void scale_add(__global const int* in, __global int* out, int factor) {
  size_t i = get_global_id(0);
  out[i] = in[i] * factor + (int)i;
}
)CL";

#define OPENCL_CALLS(X) \
  X(clGetPlatformIDs) X(clGetDeviceIDs) X(clCreateContext) X(clCreateCommandQueueWithProperties) \
  X(clCreateProgramWithSource) X(clBuildProgram) X(clCreateKernel) X(clCreateBuffer) X(clSetKernelArg) \
  X(clEnqueueNDRangeKernel) X(clEnqueueReadBuffer) X(clFinish) X(clReleaseKernel) X(clReleaseProgram) \
  X(clReleaseMemObject) X(clReleaseCommandQueue) X(clReleaseContext)

struct Api {
#define DECLARE(name) decltype(&::name) name = nullptr;
  OPENCL_CALLS(DECLARE)
#undef DECLARE
};

int fail(const char* what, cl_int status) {
  std::fprintf(stderr, "dlopen_app: %s failed (%d)\n", what, status);
  return 1;
}

}  // namespace

int main() {
  void* loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!loader) return fail("dlopen libOpenCL.so.1", 0);
  Api cl;
  bool resolved = true;
#define RESOLVE(name)                                                              \
  cl.name = reinterpret_cast<decltype(&::name)>(dlsym(loader, #name)); \
  resolved = resolved && cl.name;
  OPENCL_CALLS(RESOLVE)
#undef RESOLVE
  if (!resolved) return fail("dlsym", 0);

  cl_platform_id platform;
  cl_device_id device;
  cl_int status = cl.clGetPlatformIDs(1, &platform, nullptr);
  if (status != CL_SUCCESS) return fail("clGetPlatformIDs", status);
  if ((status = cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr)) != CL_SUCCESS) {
    return fail("clGetDeviceIDs", status);
  }
  cl_context context = cl.clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  if (!context) return fail("clCreateContext", status);
  cl_command_queue queue = cl.clCreateCommandQueueWithProperties(context, device, nullptr, &status);
  if (!queue) return fail("clCreateCommandQueueWithProperties", status);
  cl_program program = cl.clCreateProgramWithSource(context, 1, &kSource, nullptr, &status);
  if (!program) return fail("clCreateProgramWithSource", status);
  if ((status = cl.clBuildProgram(program, 1, &device, "-DUNUSED=1", nullptr, nullptr)) != CL_SUCCESS) {
    return fail("clBuildProgram", status);
  }
  cl_kernel kernel = cl.clCreateKernel(program, "scale_add", &status);
  if (!kernel) return fail("clCreateKernel", status);

  constexpr int kCount = 1024;
  constexpr int kFactor = 3;
  std::vector<int> input(kCount), output(kCount, 0);
  for (int i = 0; i < kCount; ++i) input[i] = i % 17;
  cl_mem in = cl.clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(int) * kCount,
                                input.data(), &status);
  cl_mem out = cl.clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof(int) * kCount, nullptr, &status);
  int factor = kFactor;
  cl.clSetKernelArg(kernel, 0, sizeof in, &in);
  cl.clSetKernelArg(kernel, 1, sizeof out, &out);
  cl.clSetKernelArg(kernel, 2, sizeof factor, &factor);
  size_t global = kCount;
  if ((status = cl.clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr)) !=
      CL_SUCCESS) {
    return fail("clEnqueueNDRangeKernel", status);
  }
  cl.clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof(int) * kCount, output.data(), 0, nullptr, nullptr);
  cl.clFinish(queue);

  long long sum = 0;
  bool correct = true;
  for (int i = 0; i < kCount; ++i) {
    sum += output[i];
    correct = correct && output[i] == input[i] * kFactor + i;
  }
  std::printf("scale_add: sum=%lld\n", sum);
  cl.clReleaseMemObject(in);
  cl.clReleaseMemObject(out);
  cl.clReleaseKernel(kernel);
  cl.clReleaseProgram(program);
  cl.clReleaseCommandQueue(queue);
  cl.clReleaseContext(context);
  if (!correct) return fail("result check", 0);
  std::printf("all results correct\n");
  return 0;
}
