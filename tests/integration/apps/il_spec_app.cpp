// Builds a SPIR-V module with specialization constants set from the command line and prints the
// values each kernel's binary was specialized with (the IL test driver reports them as
// CL_KERNEL_ATTRIBUTES). Usage: il_spec_app <module.spv> [<spec id>=<int value>]...
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cl_app.hpp"

namespace {

int fail(const char* what, cl_int status) {
  std::fprintf(stderr, "il_spec_app: %s failed (%d)\n", what, status);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: il_spec_app <module.spv> [id=value]...\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<char> il((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (il.empty()) return fail("reading the module", 0);

  cl_app::FirstDevice cl;
  const char* failed_call = "";
  cl_int status = cl_app::open_first_device(&cl, &failed_call, /*with_queue=*/false);
  if (status != CL_SUCCESS) return fail(failed_call, status);
  auto [platform, device, context, queue] = cl;

  // The driver must behave like one: a binary it did not produce is refused.
  const unsigned char junk[] = "\x7f" "ELF not a binary of this device";
  size_t junk_size = sizeof junk;
  const unsigned char* junk_pointer = junk;
  cl_int binary_status = CL_SUCCESS;
  cl_program foreign =
      clCreateProgramWithBinary(context, 1, &device, &junk_size, &junk_pointer, &binary_status, &status);
  if (foreign || status != CL_INVALID_BINARY) return fail("refusing a foreign binary", status);

  cl_program program = clCreateProgramWithIL(context, il.data(), il.size(), &status);
  if (!program) return fail("clCreateProgramWithIL", status);
  for (int i = 2; i < argc; ++i) {
    std::string assignment = argv[i];
    size_t equals = assignment.find('=');
    if (equals == std::string::npos) return fail("parsing id=value", 0);
    cl_uint id = static_cast<cl_uint>(std::stoul(assignment.substr(0, equals)));
    cl_int value = std::stoi(assignment.substr(equals + 1));
    if ((status = clSetProgramSpecializationConstant(program, id, sizeof value, &value)) != CL_SUCCESS) {
      return fail("clSetProgramSpecializationConstant", status);
    }
  }
  if ((status = clBuildProgram(program, 1, &device, "", nullptr, nullptr)) != CL_SUCCESS) {
    return fail("clBuildProgram", status);
  }
  for (const char* name : {"fill_scaled", "add_offset"}) {
    cl_kernel kernel = clCreateKernel(program, name, &status);
    if (!kernel) return fail("clCreateKernel", status);
    char attributes[256] = {};
    clGetKernelInfo(kernel, CL_KERNEL_ATTRIBUTES, sizeof attributes, attributes, nullptr);
    std::printf("%s: %s\n", name, attributes);
    clReleaseKernel(kernel);
  }
  clReleaseProgram(program);
  clReleaseContext(context);
  std::printf("all results correct\n");
  return 0;
}
