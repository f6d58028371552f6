// Builds one source into two programs of one context, says whether PoCL gave them one scratch
// folder, releases the first, then runs a kernel of the second. Under jitcache both can be loaded
// from the same cached binary: on PoCL with its kernel cache off, programs loaded from one binary
// shared the scratch folder it names, and the first release deleted it under the others, a race
// that aborted apps (driver_quirks.hpp, pocl-shared-scratch-folder). Prints the checked result.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_app.hpp"

#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kCount = 1024;
const char* kSource =
    "__kernel void triple_xor(__global int* d, int mask) { size_t i = get_global_id(0); d[i] = (d[i] * 3) ^ mask; }\n";

using cl_app::check;
using cl_app::fail;

cl_program build(cl_context context, cl_device_id device) {
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  return program;
}

// The scratch folder PoCL's binary of `program` names (its header's build-hash field: byte 36 in
// format 9, 32 before), or empty for another driver's binary.
std::string scratch_folder(cl_program program) {
  size_t size = 0;
  check(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr), "CL_PROGRAM_BINARY_SIZES");
  std::vector<unsigned char> binary(size);
  unsigned char* pointer = binary.data();
  check(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr), "CL_PROGRAM_BINARIES");
  if (size < 80 || std::memcmp(binary.data(), "poclbin", 8) != 0) return {};
  std::uint32_t version = 0;
  std::memcpy(&version, binary.data() + 16, sizeof version);
  const char* field = reinterpret_cast<const char*>(binary.data() + (version >= 9 ? 36 : 32));
  return std::string(field, strnlen(field, 41));
}

}  // namespace

int main() {
  cl_app::program_name = "opencl_shared_binary";
  const cl_app::FirstDevice cl = cl_app::first_device_or_exit();
  cl_device_id device = cl.device;
  cl_context context = cl.context;
  cl_command_queue queue = cl.queue;
  cl_int status = CL_SUCCESS;

  cl_program first = build(context, device);
  cl_program second = build(context, device);
  std::string first_folder = scratch_folder(first);
  if (!first_folder.empty()) {
    std::printf("programs share a scratch folder: %s\n", first_folder == scratch_folder(second) ? "yes" : "no");
  }
  check(clReleaseProgram(first), "clReleaseProgram");

  cl_kernel kernel = clCreateKernel(second, "triple_xor", &status);
  check(status, "clCreateKernel");
  std::vector<cl_int> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<cl_int>(i * 13 % 977);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, kCount * sizeof(cl_int),
                                 data.data(), &status);
  check(status, "clCreateBuffer");
  cl_int mask = 0x55;
  check(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), "clSetKernelArg");
  check(clSetKernelArg(kernel, 1, sizeof mask, &mask), "clSetKernelArg");
  size_t global = kCount;
  size_t local = 16;  // a work-group size the binary was not read back with: compiled at this enqueue
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr), "clEnqueueNDRange");
  std::vector<cl_int> out(kCount);
  check(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, kCount * sizeof(cl_int), out.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  long long sum = 0;
  bool correct = true;
  for (size_t i = 0; i < kCount; ++i) {
    correct = correct && out[i] == ((data[i] * 3) ^ mask);
    sum += out[i];
  }
  std::printf("triple_xor: sum=%lld %s\n", sum, correct ? "correct" : "WRONG");
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(second);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return correct ? 0 : 1;
}
