// A small OpenCL app: builds two programs (one includes a header), runs four kernels, checks every
// result on the host and prints them. Build times go to stderr so that stdout is identical
// between a cold and a cached run. OpenCL 1.2 API only, so it also builds for Windows.
//
//   opencl_example [--kernels DIR] [--async] [--options OPTS] [--rebuild-options OPTS]
//                  [--pause-fifo PATH]   (after the first build, read PATH to its end: tests use it
//                                         to change the world between two builds)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_app.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr size_t kCount = 1024;

struct Arguments {
  std::string kernel_dir = JITCACHE_EXAMPLE_KERNEL_DIR;
  bool async = false;
  std::string options;
  std::string rebuild_options;
  bool rebuild = false;
  std::string pause_fifo;
};

using cl_app::check;
using cl_app::fail;
using cl_app::read_file;
using Environment = cl_app::FirstDevice;

void CL_CALLBACK build_finished(cl_program, void* user_data) { ++*static_cast<int*>(user_data); }

void build(cl_program program, const Environment& env, const std::string& options, bool async, const char* label) {
  auto start = std::chrono::steady_clock::now();
  int notified = 0;
  cl_int status = clBuildProgram(program, 1, &env.device, options.c_str(), async ? build_finished : nullptr,
                                 async ? &notified : nullptr);
  if (status != CL_SUCCESS) {
    char log[16384] = {};
    clGetProgramBuildInfo(program, env.device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, nullptr);
    std::fprintf(stderr, "%s\n", log);
    fail(std::string("clBuildProgram ") + label, status);
  }
  if (async) {
    // The driver or the cache may call back before clBuildProgram returns; either way exactly once.
    cl_build_status build_status = CL_BUILD_IN_PROGRESS;
    while (build_status == CL_BUILD_IN_PROGRESS) {
      check(clGetProgramBuildInfo(program, env.device, CL_PROGRAM_BUILD_STATUS, sizeof build_status, &build_status,
                                  nullptr),
            "clGetProgramBuildInfo");
    }
    if (notified != 1) fail(std::string("build callback count for ") + label, notified);
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "opencl_example: build %s %.1f ms\n", label, ms);
}

cl_program program_from_file(const Environment& env, const std::string& path) {
  std::string source = read_file(path);
  const char* text = source.c_str();
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(env.context, 1, &text, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  return program;
}

cl_mem buffer(const Environment& env, size_t bytes, const void* data) {
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(env.context, CL_MEM_READ_WRITE | (data ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              const_cast<void*>(data), &status);
  check(status, "clCreateBuffer");
  return mem;
}

void run(const Environment& env, cl_kernel kernel) {
  size_t global = kCount;
  check(clEnqueueNDRangeKernel(env.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
        "clEnqueueNDRangeKernel");
  check(clFinish(env.queue), "clFinish");
}

template <typename T>
std::vector<T> read(const Environment& env, cl_mem mem, size_t count) {
  std::vector<T> values(count);
  check(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, count * sizeof(T), values.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  return values;
}

double sum(const std::vector<float>& values) {
  double total = 0;
  for (float v : values) total += v;
  return total;
}

bool run_vector_math(const Environment& env, cl_program program) {
  std::vector<float> a(kCount), b(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = static_cast<float>(kCount - i);
  }
  cl_mem mem_a = buffer(env, kCount * sizeof(float), a.data());
  cl_mem mem_b = buffer(env, kCount * sizeof(float), b.data());
  cl_mem mem_out = buffer(env, kCount * sizeof(float), nullptr);
  cl_mem mem_scale = buffer(env, sizeof(float), nullptr);
  cl_int status = CL_SUCCESS;
  bool ok = true;

  cl_kernel add = clCreateKernel(program, "vector_add", &status);
  check(status, "clCreateKernel vector_add");
  clSetKernelArg(add, 0, sizeof(cl_mem), &mem_a);
  clSetKernelArg(add, 1, sizeof(cl_mem), &mem_b);
  clSetKernelArg(add, 2, sizeof(cl_mem), &mem_out);
  run(env, add);
  std::vector<float> added = read<float>(env, mem_out, kCount);
  for (size_t i = 0; i < kCount; ++i) ok = ok && added[i] == a[i] + b[i];
  std::printf("vector_add: sum=%.1f first=%.1f last=%.1f\n", sum(added), added[0], added[kCount - 1]);

  cl_kernel saxpy = clCreateKernel(program, "saxpy", &status);
  check(status, "clCreateKernel saxpy");
  float alpha = 2.0f;
  clSetKernelArg(saxpy, 0, sizeof alpha, &alpha);
  clSetKernelArg(saxpy, 1, sizeof(cl_mem), &mem_a);
  clSetKernelArg(saxpy, 2, sizeof(cl_mem), &mem_b);  // y = alpha * a + b, in place
  run(env, saxpy);
  std::vector<float> y = read<float>(env, mem_b, kCount);
  for (size_t i = 0; i < kCount; ++i) ok = ok && y[i] == alpha * a[i] + b[i];
  std::printf("saxpy: sum=%.1f first=%.1f last=%.1f\n", sum(y), y[0], y[kCount - 1]);

  cl_kernel transform = clCreateKernel(program, "transform_all", &status);
  check(status, "clCreateKernel transform_all");
  clSetKernelArg(transform, 0, sizeof(cl_mem), &mem_a);
  clSetKernelArg(transform, 1, sizeof(cl_mem), &mem_out);
  clSetKernelArg(transform, 2, sizeof(cl_mem), &mem_scale);
  run(env, transform);
  std::vector<float> transformed = read<float>(env, mem_out, kCount);
  float scale = read<float>(env, mem_scale, 1)[0];
  for (size_t i = 0; i < kCount; ++i) ok = ok && std::fabs(transformed[i] - (a[i] * scale + 1.0f)) < 1e-3f;
  std::printf("transform_all: scale=%.2f sum=%.1f\n", scale, sum(transformed));

  cl_program owner = nullptr;
  clGetKernelInfo(add, CL_KERNEL_PROGRAM, sizeof owner, &owner, nullptr);
  if (owner != program) fail("CL_KERNEL_PROGRAM names the program", -1);

  for (cl_kernel k : {add, saxpy, transform}) clReleaseKernel(k);
  for (cl_mem m : {mem_a, mem_b, mem_out, mem_scale}) clReleaseMemObject(m);
  return ok;
}

bool run_integer_ops(const Environment& env, cl_program program, const char* label) {
  std::vector<cl_int> in(kCount);
  for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<cl_int>(i % 100);
  cl_mem mem_in = buffer(env, kCount * sizeof(cl_int), in.data());
  cl_mem mem_out = buffer(env, kCount * sizeof(cl_int), nullptr);
  cl_mem mem_offset = buffer(env, sizeof(cl_int), nullptr);
  cl_kernel kernels[4] = {};
  cl_uint created = 0;
  check(clCreateKernelsInProgram(program, 4, kernels, &created), "clCreateKernelsInProgram");
  if (created != 1) fail("kernel count of integer_ops", static_cast<cl_int>(created));
  clSetKernelArg(kernels[0], 0, sizeof(cl_mem), &mem_in);
  clSetKernelArg(kernels[0], 1, sizeof(cl_mem), &mem_out);
  clSetKernelArg(kernels[0], 2, sizeof(cl_mem), &mem_offset);
  run(env, kernels[0]);
  std::vector<cl_int> out = read<cl_int>(env, mem_out, kCount);
  cl_int offset = read<cl_int>(env, mem_offset, 1)[0];
  bool ok = true;
  long long total = 0;
  for (size_t i = 0; i < kCount; ++i) {
    ok = ok && out[i] == in[i] * in[i] + offset;
    total += out[i];
  }
  std::printf("%s: offset=%d sum=%lld\n", label, offset, total);
  clReleaseKernel(kernels[0]);
  for (cl_mem m : {mem_in, mem_out, mem_offset}) clReleaseMemObject(m);
  return ok;
}

Arguments parse(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail("missing value after " + arg, -1);
      return argv[++i];
    };
    if (arg == "--kernels") args.kernel_dir = value();
    else if (arg == "--async") args.async = true;
    else if (arg == "--options") args.options = value();
    else if (arg == "--pause-fifo") args.pause_fifo = value();
    else if (arg == "--rebuild-options") {
      args.rebuild_options = value();
      args.rebuild = true;
    } else {
      std::fprintf(stderr, "usage: opencl_example [--kernels DIR] [--async] [--options OPTS] [--rebuild-options OPTS] [--pause-fifo PATH]\n");
      std::exit(2);
    }
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "opencl_example";
  Arguments args = parse(argc, argv);
  Environment env = cl_app::first_device_or_exit();

  cl_program vector_math = program_from_file(env, args.kernel_dir + "/vector_math.cl");
  build(vector_math, env, "-I " + args.kernel_dir, args.async, "vector_math");
  if (!args.pause_fifo.empty()) {  // blocks until the writer opens the FIFO, then until it closes it
    std::ifstream fifo(args.pause_fifo);
    std::string ignored((std::istreambuf_iterator<char>(fifo)), std::istreambuf_iterator<char>());
  }
  cl_program integer_ops = program_from_file(env, args.kernel_dir + "/integer_ops.cl");
  build(integer_ops, env, args.options, args.async, "integer_ops");

  bool ok = run_vector_math(env, vector_math);
  ok = run_integer_ops(env, integer_ops, "square_plus_offset") && ok;
  if (args.rebuild) {  // the same program object built a second time, with other options
    build(integer_ops, env, args.rebuild_options, args.async, "integer_ops again");
    ok = run_integer_ops(env, integer_ops, "square_plus_offset (rebuilt)") && ok;
  }

  clReleaseProgram(vector_math);
  clReleaseProgram(integer_ops);
  clReleaseCommandQueue(env.queue);
  clReleaseContext(env.context);
  std::printf("%s\n", ok ? "all results correct" : "WRONG RESULTS");
  return ok ? 0 : 1;
}
