// Times program builds the way an app does them, for the benchmark scripts in bench/.
// Knows nothing about jitcache: the scripts run it with and without LD_PRELOAD.
//
//   build_timer --source FILE [--reps N] [--distinct] [--dump-binary OUT] [--run-kernels] [--device cpu|gpu|any]
//   build_timer --binary FILE [--reps N] [--device ...]
//
// --source: clCreateProgramWithSource + clBuildProgram, N times in one context (rep 2.. shows
//           what a second build of the same source in the same process costs: the memory tier).
// --binary: the driver floor: read FILE, clCreateProgramWithBinary + clBuildProgram.
// --run-kernels: after each build, create every kernel (what an app does next).
// --distinct: rep N builds the source with a comment "// rep N" appended, so that every rep is a
//             new program (a miss), and a first miss can be told from the ones after it.
// --split: each line is "<total> <create> <build>" (microseconds: the whole rep, the create call,
//          clBuildProgram), to tell where a difference goes.
// Prints one line per rep, "<microseconds>", on stdout; errors on stderr, exit status 1.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_app.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Arguments {
  std::string source;
  std::string binary;
  std::string dump_binary;
  std::string device = "any";
  int reps = 1;
  bool run_kernels = false;
  bool distinct = false;
  bool split = false;
};

using cl_app::check;
using cl_app::fail;
using cl_app::read_file;

Arguments parse(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail("missing value after " + flag, -1);
      return argv[++i];
    };
    if (flag == "--source") args.source = value();
    else if (flag == "--binary") args.binary = value();
    else if (flag == "--dump-binary") args.dump_binary = value();
    else if (flag == "--device") args.device = value();
    else if (flag == "--reps") args.reps = std::atoi(value().c_str());
    else if (flag == "--run-kernels") args.run_kernels = true;
    else if (flag == "--distinct") args.distinct = true;
    else if (flag == "--split") args.split = true;
    else fail("unknown argument " + flag, -1);
  }
  if (args.source.empty() == args.binary.empty()) fail("give exactly one of --source, --binary", -1);
  return args;
}

cl_device_id pick_device(const std::string& wanted) {
  cl_device_type type = wanted == "cpu" ? CL_DEVICE_TYPE_CPU : wanted == "gpu" ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
  cl_uint count = 0;
  check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id platform : platforms) {
    cl_device_id device = nullptr;
    if (clGetDeviceIDs(platform, type, 1, &device, nullptr) == CL_SUCCESS && device) return device;
  }
  fail("finding a " + wanted + " device", -1);
}

void build_or_fail(cl_program program, cl_device_id device) {
  cl_int status = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  if (status == CL_SUCCESS) return;
  size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  std::fprintf(stderr, "%s\n", log.c_str());
  fail("clBuildProgram", status);
}

void create_all_kernels(cl_program program) {
  cl_uint count = 0;
  check(clCreateKernelsInProgram(program, 0, nullptr, &count), "clCreateKernelsInProgram");
  std::vector<cl_kernel> kernels(count);
  check(clCreateKernelsInProgram(program, count, kernels.data(), nullptr), "clCreateKernelsInProgram");
  for (cl_kernel kernel : kernels) clReleaseKernel(kernel);
}

void dump_binary(cl_program program, const std::string& path) {
  size_t size = 0;
  check(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr), "binary size");
  std::string binary(size, '\0');
  auto* pointer = reinterpret_cast<unsigned char*>(binary.data());
  check(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr), "binaries");
  std::ofstream(path, std::ios::binary).write(binary.data(), static_cast<std::streamsize>(binary.size()));
}

}  // namespace

int main(int argc, char** argv) {
  cl_app::program_name = "build_timer";
  Arguments args = parse(argc, argv);
  cl_device_id device = pick_device(args.device);
  cl_int status = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  check(status, "clCreateContext");
  std::string source = args.source.empty() ? std::string() : read_file(args.source);

  for (int rep = 0; rep < args.reps; ++rep) {
    auto start = std::chrono::steady_clock::now();
    cl_program program = nullptr;
    if (!args.source.empty()) {
      std::string text_of_rep = args.distinct ? source + "\n// rep " + std::to_string(rep) + "\n" : source;
      const char* text = text_of_rep.c_str();
      size_t length = text_of_rep.size();
      program = clCreateProgramWithSource(context, 1, &text, &length, &status);
      check(status, "clCreateProgramWithSource");
    } else {
      // The floor reads its binary from a file, as the cache must.
      std::string binary = read_file(args.binary);
      const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
      size_t length = binary.size();
      cl_int binary_status = CL_SUCCESS;
      program = clCreateProgramWithBinary(context, 1, &device, &length, &bytes, &binary_status, &status);
      check(status, "clCreateProgramWithBinary");
    }
    const auto created = std::chrono::steady_clock::now();
    build_or_fail(program, device);
    const auto built = std::chrono::steady_clock::now();
    if (args.run_kernels) create_all_kernels(program);
    auto us = [](auto from, auto to) {
      return static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(to - from).count());
    };
    const auto end = std::chrono::steady_clock::now();
    if (args.split) {
      std::printf("%lld %lld %lld\n", us(start, end), us(start, created), us(created, built));
    } else {
      std::printf("%lld\n", us(start, end));
    }
    if (rep == 0 && !args.dump_binary.empty()) dump_binary(program, args.dump_binary);
    clReleaseProgram(program);
  }
  clReleaseContext(context);
  return 0;
}
