// Builds a kernel the separate-compilation way: clCompileProgram of two sources (one including a
// header handed over through input_headers), then clLinkProgram, then runs it.
// After each compile it prints what an app may ask about the compiled object (hashcat asks for the
// build log's size), so a test can compare the answers with and without jitcache.
// Usage: compile_link_app <params.h file> <SCALE the header defines>
#ifndef CL_TARGET_OPENCL_VERSION  // the Windows build asks for 1.2 (tests/windows/apps)
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cl_app.hpp"

namespace {

const char* kMainSource = R"CL(
#include "params.h"
int offset_of(int i);
__kernel void combine(__global int* out) {
  int i = get_global_id(0);
  out[i] = i * SCALE + offset_of(i);
}
)CL";

const char* kHelperSource = R"CL(
int offset_of(int i) { return (i % 7) * 100; }
)CL";

std::string build_info_text(cl_program program, cl_device_id device, cl_program_build_info param) {
  size_t size = 0;
  cl_int status = clGetProgramBuildInfo(program, device, param, 0, nullptr, &size);
  if (status != CL_SUCCESS) return "error " + std::to_string(status);
  std::string text(size, '\0');
  status = clGetProgramBuildInfo(program, device, param, size, text.data(), nullptr);
  if (status != CL_SUCCESS) return "error " + std::to_string(status);
  return "size " + std::to_string(size) + " \"" + std::string(text.c_str()) + "\"";
}

template <typename T>
std::string build_info_value(cl_program program, cl_device_id device, cl_program_build_info param) {
  T value{};
  size_t size = 0;
  cl_int status = clGetProgramBuildInfo(program, device, param, sizeof value, &value, &size);
  if (status != CL_SUCCESS) return "error " + std::to_string(status);
  return std::to_string(value) + " (size " + std::to_string(size) + ")";
}

// The binary's size, and that it was returned (PoCL's bytes differ from compile to compile).
std::string binary_text(cl_program program) {
  size_t size = 0;
  cl_int status = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
  if (status != CL_SUCCESS) return "error " + std::to_string(status);
  std::vector<unsigned char> binary(size + 1, 0xA5);
  unsigned char* pointer = binary.data();
  status = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr);
  if (status != CL_SUCCESS) return "error " + std::to_string(status);
  bool filled = size > 0 && binary[size] == 0xA5 && !(binary[0] == 0xA5 && binary[size - 1] == 0xA5);
  return "size " + std::to_string(size) + (filled ? " returned" : " not returned");
}

void describe_object(const char* name, cl_program program, cl_device_id device) {
  std::printf("%s log: %s\n", name, build_info_text(program, device, CL_PROGRAM_BUILD_LOG).c_str());
  std::printf("%s status: %s\n", name, build_info_value<cl_build_status>(program, device, CL_PROGRAM_BUILD_STATUS).c_str());
  std::printf("%s options: %s\n", name, build_info_text(program, device, CL_PROGRAM_BUILD_OPTIONS).c_str());
  std::printf("%s binary type: %s\n", name,
              build_info_value<cl_program_binary_type>(program, device, CL_PROGRAM_BINARY_TYPE).c_str());
  std::printf("%s binary: %s\n", name, binary_text(program).c_str());
  char too_small[1];  // the options do not fit: the driver's error code
  std::printf("%s options in 1 byte: %d\n", name,
              clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_OPTIONS, 1, too_small, nullptr));
}

int fail(const char* what, cl_int status) {
  std::fprintf(stderr, "compile_link_app: %s failed (%d)\n", what, status);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compile_link_app <params.h> <expected SCALE>\n");
    return 2;
  }
  std::ifstream header_file(argv[1]);
  std::stringstream header_text;
  header_text << header_file.rdbuf();
  std::string header = header_text.str();
  const int expected_scale = std::atoi(argv[2]);

  cl_app::FirstDevice cl;
  const char* failed_call = "";
  cl_int status = cl_app::open_first_device(&cl, &failed_call);
  if (status != CL_SUCCESS) return fail(failed_call, status);
  auto [platform, device, context, queue] = cl;

  const char* header_source = header.c_str();
  cl_program header_program = clCreateProgramWithSource(context, 1, &header_source, nullptr, &status);
  cl_program main_program = clCreateProgramWithSource(context, 1, &kMainSource, nullptr, &status);
  cl_program helper_program = clCreateProgramWithSource(context, 1, &kHelperSource, nullptr, &status);
  if (!header_program || !main_program || !helper_program) return fail("clCreateProgramWithSource", status);

  const char* include_name = "params.h";
  status = clCompileProgram(main_program, 1, &device, "-cl-std=CL1.2", 1, &header_program, &include_name, nullptr,
                            nullptr);
  if (status != CL_SUCCESS) return fail("clCompileProgram main", status);
  describe_object("main", main_program, device);
  clReleaseProgram(header_program);  // the compile has what it needs
  status = clCompileProgram(helper_program, 1, &device, "-cl-std=CL1.2", 0, nullptr, nullptr, nullptr, nullptr);
  if (status != CL_SUCCESS) return fail("clCompileProgram helper", status);
  describe_object("helper", helper_program, device);

  cl_program inputs[] = {main_program, helper_program};
  cl_program linked = clLinkProgram(context, 1, &device, "", 2, inputs, nullptr, nullptr, &status);
  if (!linked || status != CL_SUCCESS) return fail("clLinkProgram", status);
  clReleaseProgram(main_program);
  clReleaseProgram(helper_program);

  cl_kernel kernel = clCreateKernel(linked, "combine", &status);
  if (!kernel) return fail("clCreateKernel", status);
  constexpr int kCount = 512;
  std::vector<int> output(kCount, 0);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof(int) * kCount, nullptr, &status);
  clSetKernelArg(kernel, 0, sizeof out, &out);
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
    correct = correct && output[i] == i * expected_scale + (i % 7) * 100;
  }
  std::printf("combine: scale=%d sum=%lld\n", expected_scale, sum);
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(linked);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (!correct) return fail("result check", 0);
  std::printf("all results correct\n");
  return 0;
}
