// Builds a kernel the way apps with a kernel cache of their own do (hashcat, CLBlast): reads
// CL_PROGRAM_BINARY_SIZES, then CL_PROGRAM_BINARIES, right after the build or link, before any
// kernel ran; then runs the kernel, and runs it again from a program created from the bytes it
// read (as the app's next run would, from its own cache). Prints both results.
// Usage: binary_reader_app <mode>
//   build        clBuildProgram, read the binary
//   link         clCompileProgram + clLinkProgram, read the linked program's binary
//   build-twice  clBuildProgram of the same program object twice (pyopencl does), no read
//   build-unused-first  builds the source, makes a kernel, releases both without running it, then
//                builds the same source as a new program (pyopencl's scan does), no read
//   from-file PATH  an app whose own cache is warm: PATH holds a binary (written by an earlier run
//                of this mode, which builds the source and saves the bytes read): only
//                clCreateProgramWithBinary + clBuildProgram, no source program at all
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cl_app.hpp"

namespace {

const char* kSource = R"CL(
__kernel void affine(__global int* out, int scale) {
  int i = get_global_id(0);
  out[i] = i * scale + (i % 5);
}
)CL";

constexpr int kCount = 1024;
constexpr int kScale = 7;

int fail(const char* what, cl_int status) {
  std::fprintf(stderr, "binary_reader_app: %s failed (%d)\n", what, status);
  return 1;
}

// Runs `affine` of `program`; -1 when something failed or a result is wrong, else the sum.
long long run_kernel(cl_context context, cl_command_queue queue, cl_program program) {
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, "affine", &status);
  if (!kernel) return -1;
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof(int) * kCount, nullptr, &status);
  int scale = kScale;
  clSetKernelArg(kernel, 0, sizeof out, &out);
  clSetKernelArg(kernel, 1, sizeof scale, &scale);
  size_t global = kCount;
  size_t local = 16;
  std::vector<int> output(kCount, 0);
  status = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  if (status == CL_SUCCESS) {
    status = clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof(int) * kCount, output.data(), 0, nullptr, nullptr);
  }
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  if (status != CL_SUCCESS) return -1;
  long long sum = 0;
  for (int i = 0; i < kCount; ++i) {
    if (output[i] != i * kScale + i % 5) return -1;
    sum += output[i];
  }
  return sum;
}

// The program's binary, read the way apps do: the sizes first, then the bytes. Empty on failure.
std::string read_binary(cl_program program) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS) return {};
  std::string binary(size, '\0');
  unsigned char* pointer = reinterpret_cast<unsigned char*>(binary.data());
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr) != CL_SUCCESS) return {};
  return binary;
}

// Creates a program from `binary`, builds and runs it, and prints "<label>: sum=...".
int run_binary(const cl_app::FirstDevice& cl, const std::string& binary, const char* label) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  size_t length = binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithBinary(cl.context, 1, &cl.device, &length, &bytes, &binary_status, &status);
  if (!program || status != CL_SUCCESS || binary_status != CL_SUCCESS) return fail("clCreateProgramWithBinary", status);
  if ((status = clBuildProgram(program, 1, &cl.device, "", nullptr, nullptr)) != CL_SUCCESS) {
    return fail("clBuildProgram of a binary", status);
  }
  long long sum = run_kernel(cl.context, cl.queue, program);
  if (sum < 0) return fail("the kernel of a program made from a binary", 0);
  std::printf("%s: sum=%lld\n", label, sum);
  clReleaseProgram(program);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 2 ? argv[1] : "";
  const std::string saved = mode == "from-file" && argc == 3 ? argv[2] : "";
  if (mode != "build" && mode != "link" && mode != "build-twice" && mode != "build-unused-first" && saved.empty()) {
    std::fprintf(stderr, "usage: binary_reader_app build|link|build-twice|build-unused-first|from-file PATH\n");
    return 2;
  }
  cl_app::FirstDevice cl;
  const char* failed_call = "";
  cl_int status = cl_app::open_first_device(&cl, &failed_call);
  if (status != CL_SUCCESS) return fail(failed_call, status);
  if (!saved.empty() && std::ifstream(saved).good()) {
    std::ifstream in(saved, std::ios::binary);
    const int result = run_binary(cl, std::string(std::istreambuf_iterator<char>(in), {}), "from-file");
    clReleaseCommandQueue(cl.queue);
    clReleaseContext(cl.context);
    return result;
  }
  auto [platform, device, context, queue] = cl;

  if (mode == "build-unused-first") {  // asked about, never run
    cl_program unused = clCreateProgramWithSource(context, 1, &kSource, nullptr, &status);
    if (!unused) return fail("clCreateProgramWithSource", status);
    if ((status = clBuildProgram(unused, 1, &device, "", nullptr, nullptr)) != CL_SUCCESS) {
      return fail("clBuildProgram", status);
    }
    cl_kernel kernel = clCreateKernel(unused, "affine", &status);
    if (!kernel) return fail("clCreateKernel", status);
    size_t work_group_size = 0;
    clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof work_group_size, &work_group_size,
                             nullptr);
    clReleaseKernel(kernel);
    clReleaseProgram(unused);
  }
  cl_program source = clCreateProgramWithSource(context, 1, &kSource, nullptr, &status);
  if (!source) return fail("clCreateProgramWithSource", status);
  cl_program program = source;
  if (mode == "link") {
    if ((status = clCompileProgram(source, 1, &device, "", 0, nullptr, nullptr, nullptr, nullptr)) != CL_SUCCESS) {
      return fail("clCompileProgram", status);
    }
    program = clLinkProgram(context, 1, &device, "", 1, &source, nullptr, nullptr, &status);
    if (!program || status != CL_SUCCESS) return fail("clLinkProgram", status);
    clReleaseProgram(source);
  } else {
    for (int build = 0; build < (mode == "build-twice" ? 2 : 1); ++build) {
      if ((status = clBuildProgram(program, 1, &device, "", nullptr, nullptr)) != CL_SUCCESS) {
        return fail("clBuildProgram", status);
      }
    }
  }
  std::string binary;
  if ((mode == "build" || mode == "link" || !saved.empty()) && (binary = read_binary(program)).empty()) {
    return fail("reading the binary", 0);
  }
  if (!saved.empty()) std::ofstream(saved, std::ios::binary) << binary;

  long long sum = run_kernel(context, queue, program);
  if (sum < 0) return fail("the kernel of the built program", 0);
  std::printf("%s: sum=%lld\n", mode.c_str(), sum);
  clReleaseProgram(program);

  // The bytes read, as the app's next run would use them from its own cache.
  if (!binary.empty() && run_binary(cl, binary, "reloaded") != 0) return 1;
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
