// Many threads of one app build the same program in one context at the same moment, as a
// thread-pool app does at start-up; then the app builds it once more. Every thread runs the
// kernel and checks its result. Under jitcache the concurrent builds cost one compile (the other
// threads wait for it) and the later build is served from the memory tier.
//
//   opencl_threads [--threads N] [--kernels DIR] [--options OPTS]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_app.hpp"

#include <atomic>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kCount = 4096;

using cl_app::check;
using cl_app::fail;
using cl_app::read_file;

struct Shared {
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  std::string source;
  std::string options;
};

// Builds the program, runs square_plus_offset on `seed`-dependent input and checks every value.
bool build_and_run(const Shared& shared, int seed) {
  const char* text = shared.source.c_str();
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(shared.context, 1, &text, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  status = clBuildProgram(program, 1, &shared.device, shared.options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    char log[16384] = {};
    clGetProgramBuildInfo(program, shared.device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, nullptr);
    std::fprintf(stderr, "%s\n", log);
    fail("clBuildProgram", status);
  }
  cl_command_queue queue = clCreateCommandQueue(shared.context, shared.device, 0, &status);
  check(status, "clCreateCommandQueue");
  cl_kernel kernel = clCreateKernel(program, "square_plus_offset", &status);
  check(status, "clCreateKernel");

  std::vector<cl_int> in(kCount), out(kCount);
  for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<cl_int>((i * 7 + static_cast<size_t>(seed)) % 1000);
  cl_mem mem_in = clCreateBuffer(shared.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, kCount * sizeof(cl_int),
                                 in.data(), &status);
  check(status, "clCreateBuffer");
  cl_mem mem_out = clCreateBuffer(shared.context, CL_MEM_WRITE_ONLY, kCount * sizeof(cl_int), nullptr, &status);
  check(status, "clCreateBuffer");
  cl_mem mem_offset = clCreateBuffer(shared.context, CL_MEM_WRITE_ONLY, sizeof(cl_int), nullptr, &status);
  check(status, "clCreateBuffer");
  clSetKernelArg(kernel, 0, sizeof(cl_mem), &mem_in);
  clSetKernelArg(kernel, 1, sizeof(cl_mem), &mem_out);
  clSetKernelArg(kernel, 2, sizeof(cl_mem), &mem_offset);
  size_t global = kCount;
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), "clEnqueueNDRange");
  cl_int offset = 0;
  check(clEnqueueReadBuffer(queue, mem_out, CL_TRUE, 0, kCount * sizeof(cl_int), out.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  check(clEnqueueReadBuffer(queue, mem_offset, CL_TRUE, 0, sizeof offset, &offset, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  bool ok = true;
  for (size_t i = 0; i < kCount; ++i) ok = ok && out[i] == in[i] * in[i] + offset;

  cl_program owner = nullptr;
  clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof owner, &owner, nullptr);
  ok = ok && owner == program;

  for (cl_mem m : {mem_in, mem_out, mem_offset}) clReleaseMemObject(m);
  clReleaseKernel(kernel);
  clReleaseCommandQueue(queue);
  clReleaseProgram(program);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "opencl_threads";
  int threads = 8;
  std::string kernel_dir = JITCACHE_EXAMPLE_KERNEL_DIR;
  Shared shared;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 < argc && arg == "--threads") threads = std::atoi(argv[++i]);
    else if (i + 1 < argc && arg == "--kernels") kernel_dir = argv[++i];
    else if (i + 1 < argc && arg == "--options") shared.options = argv[++i];
    else {
      std::fprintf(stderr, "usage: opencl_threads [--threads N] [--kernels DIR] [--options OPTS]\n");
      return 2;
    }
  }
  if (threads < 1) threads = 1;
  shared.source = read_file(kernel_dir + "/integer_ops.cl");
  const cl_app::FirstDevice cl = cl_app::first_device_or_exit(/*with_queue=*/false);
  shared.device = cl.device;
  shared.context = cl.context;

  // Every thread reaches clBuildProgram together.
  std::barrier start(threads);
  std::atomic<int> correct{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      if (build_and_run(shared, t)) ++correct;
    });
  }
  for (auto& thread : pool) thread.join();
  // The same build once more, later, in the same context.
  bool again = build_and_run(shared, threads);

  clReleaseContext(shared.context);
  std::printf("%d of %d concurrent builds correct; later build %s\n", correct.load(), threads,
              again ? "correct" : "WRONG");
  const bool ok = correct == threads && again;
  std::printf("%s\n", ok ? "all results correct" : "WRONG RESULTS");
  return ok ? 0 : 1;
}
