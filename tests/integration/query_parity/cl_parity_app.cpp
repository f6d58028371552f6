// Builds a corpus of OpenCL programs and prints every query's answer for each (cl_query_dump.hpp),
// so a test can compare a run without jitcache, a cold run and a warm run line by line.
// Usage: cl_parity_app corpus             PoCL: attributes, arg info, warnings, options, callback,
//                                          compile + link; every device of the first platform
//        cl_parity_app il <module.spv>    the IL test driver: IL with specialization constants
//        cl_parity_app file <kernel.cl> [options]   one source file (the examples' kernels)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cl_query_dump.hpp"

namespace {

using query_parity::DumpScope;

[[noreturn]] void fail(const std::string& what, cl_int status) {
  std::fprintf(stderr, "cl_parity_app: %s failed (%d)\n", what.c_str(), status);
  std::exit(1);
}

// Attributes the driver reports as CL_KERNEL_ATTRIBUTES for programs built from source.
const char* kAttributes = R"CL(
__kernel __attribute__((vec_type_hint(uchar2))) void hinted(__global uchar2* out) { out[get_global_id(0)] = (uchar2)(1, 2); }
__kernel __attribute__((reqd_work_group_size(4, 2, 1))) void required(__global int* out) {
  out[get_global_id(0) + get_global_id(1) * 4] = 7;
}
__kernel __attribute__((work_group_size_hint(8, 1, 1))) __attribute__((vec_type_hint(float4)))
void both(__global float4* out) { out[get_global_id(0)] = (float4)(1.0f); }
__kernel void plain(__global int* out, int value) { out[get_global_id(0)] = value; }
)CL";

// Every address, access and type qualifier an argument can carry.
const char* kArguments = R"CL(
typedef struct { int a; float b; } pair_t;
typedef float4 vector_t;
__kernel void qualified(__global const int* restrict in, __global volatile int* out, __local float* scratch,
                        __constant int* table, int count, pair_t pair, vector_t vector,
                        __global const volatile int* restrict both_qualifiers) {
  size_t i = get_global_id(0);
  scratch[get_local_id(0)] = (float)in[i] + pair.b + vector.x;
  out[i] = table[i % 4] + count + pair.a + (int)scratch[get_local_id(0)] + both_qualifiers[0];
}
__kernel void images(read_only image2d_t source, write_only image2d_t target, sampler_t sampler) {
  int2 at = (int2)(get_global_id(0), get_global_id(1));
  write_imagef(target, at, read_imagef(source, sampler, at));
}
)CL";

// A build whose log is not empty.
const char* kWarnings = R"CL(
#warning "the parity corpus warns here"
__kernel void warned(__global int* out) {
  int unused_but_fine = 3;
  out[get_global_id(0)] = VALUE;
}
)CL";

const char* kCompiledMain = R"CL(
int helper(int i);
__kernel __attribute__((reqd_work_group_size(2, 1, 1))) void linked(__global int* out) {
  out[get_global_id(0)] = helper((int)get_global_id(0));
}
)CL";
const char* kCompiledHelper = R"CL(
#warning "the helper warns at compile time"
int helper(int i) { return i * 3; }
)CL";

struct Platform {
  cl_context context = nullptr;
  std::vector<cl_device_id> devices;
};

Platform open_platform() {
  cl_platform_id platform = nullptr;
  cl_int status = clGetPlatformIDs(1, &platform, nullptr);
  if (status != CL_SUCCESS) fail("clGetPlatformIDs", status);
  cl_uint count = 0;
  if ((status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count)) != CL_SUCCESS) fail("clGetDeviceIDs", status);
  Platform opened;
  opened.devices.resize(count);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, opened.devices.data(), nullptr);
  opened.context = clCreateContext(nullptr, count, opened.devices.data(), nullptr, nullptr, &status);
  if (!opened.context) fail("clCreateContext", status);
  std::printf("devices: %u\n", count);
  return opened;
}

cl_program from_source(const Platform& platform, const char* source) {
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(platform.context, 1, &source, nullptr, &status);
  if (!program) fail("clCreateProgramWithSource", status);
  return program;
}

void build_and_dump(const Platform& platform, const std::string& label, const char* source, const char* options) {
  cl_program program = from_source(platform, source);
  std::printf("%s: clBuildProgram %d\n", label.c_str(), clBuildProgram(program, 0, nullptr, options, nullptr, nullptr));
  query_parity::dump_program(label, program, {platform.context, platform.devices});
  clReleaseProgram(program);
}

// What an app sees from inside its build callback.
void CL_CALLBACK report_build(cl_program program, void* user_data) {
  const auto* platform = static_cast<const Platform*>(user_data);
  cl_build_status status = CL_BUILD_NONE;
  clGetProgramBuildInfo(program, platform->devices[0], CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr);
  std::printf("callback: build status %d\n", status);
}

void build_with_callback(const Platform& platform) {
  cl_program program = from_source(platform, kAttributes);
  Platform* user_data = const_cast<Platform*>(&platform);
  std::printf("callback build: clBuildProgram %d\n",
              clBuildProgram(program, 0, nullptr, "-cl-kernel-arg-info -DCALLBACK", report_build, user_data));
  // PoCL calls back before clBuildProgram returns; so does jitcache on a hit.
  query_parity::dump_program("callback build", program, {platform.context, platform.devices});
  clReleaseProgram(program);
}

void compile_and_link(const Platform& platform) {
  cl_program main_object = from_source(platform, kCompiledMain);
  cl_program helper_object = from_source(platform, kCompiledHelper);
  DumpScope scope{platform.context, platform.devices};
  std::printf("compile main: %d\n", clCompileProgram(main_object, 0, nullptr, "-cl-kernel-arg-info", 0, nullptr,
                                                      nullptr, nullptr, nullptr));
  std::printf("compile helper: %d\n",
              clCompileProgram(helper_object, 0, nullptr, "-DUNUSED=1", 0, nullptr, nullptr, nullptr, nullptr));
  query_parity::dump_program_queries("compiled main", main_object, scope);
  query_parity::dump_program_queries("compiled helper", helper_object, scope);
  cl_program objects[] = {main_object, helper_object};
  cl_int status = CL_SUCCESS;
  cl_program linked = clLinkProgram(platform.context, 0, nullptr, "", 2, objects, nullptr,
                                    nullptr, &status);
  std::printf("link: %d\n", status);
  if (linked) {
    query_parity::dump_program("linked", linked, scope);
    clReleaseProgram(linked);
  }
  clReleaseProgram(main_object);
  clReleaseProgram(helper_object);
}

void corpus() {
  Platform platform = open_platform();
  build_and_dump(platform, "attributes", kAttributes, "");
  // The same build again in this context: under jitcache a hit from the memory tier (one device).
  if (platform.devices.size() == 1) build_and_dump(platform, "attributes again", kAttributes, "");
  build_and_dump(platform, "attributes with arg info", kAttributes, "-cl-kernel-arg-info");
  build_and_dump(platform, "arguments with arg info", kArguments, "-cl-kernel-arg-info");
  build_and_dump(platform, "arguments without arg info", kArguments, "");
  build_and_dump(platform, "warnings and options", kWarnings, "-DVALUE=3  -cl-mad-enable -cl-kernel-arg-info ");
  build_with_callback(platform);
  compile_and_link(platform);
}

void il(const char* path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.empty()) fail(std::string("reading ") + path, 0);
  Platform platform = open_platform();
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithIL(platform.context, bytes.data(), bytes.size(), &status);
  if (!program) fail("clCreateProgramWithIL", status);
  cl_int scale = 5;
  std::printf("spec constant: %d\n", clSetProgramSpecializationConstant(program, 7, sizeof scale, &scale));
  std::printf("il: clBuildProgram %d\n", clBuildProgram(program, 0, nullptr, "-cl-kernel-arg-info", nullptr, nullptr));
  query_parity::dump_program("il", program, {platform.context, platform.devices});
  clReleaseProgram(program);
}

void one_file(const char* path, const char* options) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::string source = text.str();
  if (source.empty()) fail(std::string("reading ") + path, 0);
  Platform platform = open_platform();
  build_and_dump(platform, path, source.c_str(), options);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "corpus") corpus();
  else if (mode == "il" && argc > 2) il(argv[2]);
  else if (mode == "file" && argc > 2) one_file(argv[2], argc > 3 ? argv[3] : "");
  else fail("usage: cl_parity_app corpus | il <module.spv> | file <kernel.cl> [options]", 0);
  std::printf("done\n");
  return 0;
}
