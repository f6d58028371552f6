// An app that makes a context, builds one program in it, runs its kernel and lets everything go,
// round after round (as the CTS's repeated_setup_cleanup does). Each context gets a destructor
// callback (OpenCL 3.0): after the last round the app waits (at most 30 s) until the driver freed
// every context it let go, and prints how many it freed. A context something else holds (a cache's
// program) is never freed. Counting references instead is racy: PoCL's worker thread drops the
// queue's hold on the context a moment after a blocking read returns. One long-lived context stays
// open beside the rounds, as in most apps, so that the driver keeps its compiler loaded.
// Prints the freed count and the checked sum; peak RSS goes to stderr ("peak_rss_kb N").
//
//   opencl_context_churn [ROUNDS]
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS  // clCreateCommandQueue: every driver has it
#include <CL/cl.h>

#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "cl_app.hpp"

namespace {

constexpr size_t kCount = 256;
const char* kSource = "__kernel void churn(__global int* d, int round) { size_t i = get_global_id(0); d[i] = d[i] * 3 + round; }\n";

using cl_app::check;

std::mutex freed_mutex;
std::condition_variable freed_changed;
int freed = 0;

void CL_CALLBACK context_freed(cl_context, void*) {
  std::lock_guard<std::mutex> lock(freed_mutex);
  ++freed;
  freed_changed.notify_all();
}

// One round; returns the checked sum.
long long run_round(cl_device_id device, int round) {
  cl_int status = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  check(status, "clCreateContext");
  check(clSetContextDestructorCallback(context, context_freed, nullptr), "clSetContextDestructorCallback");
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
  clReleaseMemObject(buffer);
  clReleaseContext(context);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "opencl_context_churn";
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
  cl_app::FirstDevice first = cl_app::first_device_or_exit(false);  // the long-lived context
  long long sum = 0;
  for (int round = 0; round < rounds; ++round) sum += run_round(first.device, round);
  {
    std::unique_lock<std::mutex> lock(freed_mutex);
    freed_changed.wait_for(lock, std::chrono::seconds(30), [&] { return freed >= rounds; });
    std::printf("contexts the driver freed after the app let them go: %d of %d\n", freed, rounds);
  }
  std::printf("sum %lld\n", sum);
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::fprintf(stderr, "peak_rss_kb %ld\n", usage.ru_maxrss);
  clReleaseContext(first.context);
  return 0;
}
