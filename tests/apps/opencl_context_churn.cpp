// An app that makes a context, builds one program in it, runs its kernel and lets everything go,
// round after round (as the CTS's repeated_setup_cleanup does). Its buffer goes last: after the
// app released the context itself, the buffer still holds it, so the app can ask how many
// references are left: the buffer's alone (1) unless something else (a cache) holds the context. One long-lived context stays open beside the
// rounds, as in most apps, so that the driver keeps its compiler loaded.
// Prints each distinct count with the rounds that saw it, and the checked sum; peak RSS goes to
// stderr ("peak_rss_kb N").
//
//   opencl_context_churn [ROUNDS]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "cl_app.hpp"

namespace {

constexpr size_t kCount = 256;
const char* kSource = "__kernel void churn(__global int* d, int round) { size_t i = get_global_id(0); d[i] = d[i] * 3 + round; }\n";

using cl_app::check;

cl_uint references_left(cl_context context) {
  cl_uint count = 0;
  check(clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof count, &count, nullptr), "reference count");
  return count;
}

// One round; returns the checked sum and sets `left` to the context's references after the app's release.
long long run_round(cl_device_id device, int round, cl_uint* left) {
  cl_int status = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  check(status, "clCreateContext");
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  check(status, "clCreateCommandQueue");
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, "churn", &status);
  check(status, "clCreateKernel");
  std::vector<cl_int> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<cl_int>(i);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(cl_int) * kCount,
                                 data.data(), &status);
  check(status, "clCreateBuffer");
  check(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), "clSetKernelArg");
  cl_int round_arg = round;
  check(clSetKernelArg(kernel, 1, sizeof round_arg, &round_arg), "clSetKernelArg");
  size_t global = kCount;
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "enqueue");
  check(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, sizeof(cl_int) * kCount, data.data(), 0, nullptr, nullptr),
        "read");
  long long sum = 0;
  for (cl_int value : data) sum += value;
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  *left = references_left(context);  // the buffer keeps the handle valid
  clReleaseMemObject(buffer);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "opencl_context_churn";
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
  cl_app::FirstDevice first = cl_app::first_device_or_exit(false);  // the long-lived context
  std::map<cl_uint, int> rounds_by_count;
  long long sum = 0;
  for (int round = 0; round < rounds; ++round) {
    cl_uint left = 0;
    sum += run_round(first.device, round, &left);
    ++rounds_by_count[left];
  }
  for (const auto& [count, seen] : rounds_by_count) {
    std::printf("context references after the app's release: %u in %d rounds\n", count, seen);
  }
  std::printf("sum %lld\n", sum);
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::fprintf(stderr, "peak_rss_kb %ld\n", usage.ru_maxrss);
  clReleaseContext(first.context);
  return 0;
}
