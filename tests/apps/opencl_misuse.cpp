// The misuse table: OpenCL program calls with NULL, zero, mismatched or foreign arguments, each
// printed as "name=code" (and a value where the call answers one). Run with and without
// LD_PRELOAD=libjitcache.so, and with a cold and a warm cache, the output must be identical:
// the shim may never change an error code or crash where the driver would not.
//
// Cases that crash the ICD loader or PoCL without the shim (a dangling or made-up handle, NULL
// `strings`, a made-up device pointer) are out of the table: no cache can make them defined.
// "A device not in the context" is a real sub-device of the device, which the context lacks.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char* kSource =
    "__kernel void add_one(__global int* data) { data[get_global_id(0)] += 1; }\n"
    "__kernel void twice(__global int* data) { data[get_global_id(0)] *= 2; }\n";
const char* kBrokenSource = "__kernel void broken(__global int* data) { data[0] = undeclared; }\n";

void print(const char* name, cl_int code) { std::printf("%s=%d\n", name, code); }
void print(const char* name, cl_int code, const std::string& value) {
  std::printf("%s=%d value=%s\n", name, code, value.c_str());
}

struct Setup {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_device_id sub_device = nullptr;  // a real device that is not in the context
};

bool open_device(Setup* setup) {
  if (clGetPlatformIDs(1, &setup->platform, nullptr) != CL_SUCCESS) return false;
  if (clGetDeviceIDs(setup->platform, CL_DEVICE_TYPE_ALL, 1, &setup->device, nullptr) != CL_SUCCESS) return false;
  cl_int status = CL_SUCCESS;
  setup->context = clCreateContext(nullptr, 1, &setup->device, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) return false;
  const cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_device_id subs[64] = {};
  cl_uint made = 0;
  status = clCreateSubDevices(setup->device, equally, 64, subs, &made);
  if (status != CL_SUCCESS || made == 0) {
    std::fprintf(stderr, "opencl_misuse: the device cannot be partitioned (%d)\n", status);
    return false;
  }
  setup->sub_device = subs[0];
  return true;
}

cl_program from_source(const Setup& setup, const char* source) {
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(setup.context, 1, &source, nullptr, &status);
  return status == CL_SUCCESS ? program : nullptr;
}

void creation_cases(const Setup& setup) {
  cl_int code = 0;
  const char* strings[2] = {kSource, nullptr};
  cl_program p;

  p = clCreateProgramWithSource(setup.context, 0, strings, nullptr, &code);
  print("source_count_zero", code);
  if (p) clReleaseProgram(p);
  p = clCreateProgramWithSource(setup.context, 2, strings, nullptr, &code);
  print("source_null_string_entry", code);
  if (p) clReleaseProgram(p);
  p = clCreateProgramWithSource(nullptr, 1, strings, nullptr, &code);
  print("source_null_context", code);
  if (p) clReleaseProgram(p);
  const size_t zero_lengths[1] = {0};  // zero length: the string is NUL-terminated
  p = clCreateProgramWithSource(setup.context, 1, strings, zero_lengths, &code);
  print("source_zero_length_entry", code);
  if (p) clReleaseProgram(p);
  p = clCreateProgramWithSource(setup.context, 1, strings, nullptr, nullptr);  // no errcode_ret
  print("source_no_errcode_ret", p ? CL_SUCCESS : -1);
  if (p) clReleaseProgram(p);

  const unsigned char il_bytes[16] = {0x03, 0x02, 0x23, 0x07};
  p = clCreateProgramWithIL(setup.context, nullptr, 0, &code);
  print("il_null_zero_length", code);
  if (p) clReleaseProgram(p);
  p = clCreateProgramWithIL(setup.context, il_bytes, 0, &code);
  print("il_zero_length", code);
  if (p) clReleaseProgram(p);
  p = clCreateProgramWithIL(setup.context, nullptr, sizeof il_bytes, &code);
  print("il_null_bytes", code);
  if (p) clReleaseProgram(p);
  p = clCreateProgramWithIL(setup.context, il_bytes, sizeof il_bytes, &code);
  print("il_truncated_module", code);
  if (p) clReleaseProgram(p);
  p = clCreateProgramWithIL(nullptr, il_bytes, sizeof il_bytes, &code);
  print("il_null_context", code);
  if (p) clReleaseProgram(p);

  print("retain_null_program", clRetainProgram(nullptr));
  print("release_null_program", clReleaseProgram(nullptr));
  print("retain_null_kernel", clRetainKernel(nullptr));
  print("release_null_kernel", clReleaseKernel(nullptr));
}

void CL_CALLBACK ignore_notify(cl_program, void*) {}

void build_cases(const Setup& setup) {
  int user_data = 0;
  cl_device_id device = setup.device;
  cl_device_id foreign_device = setup.sub_device;

  print("build_null_program", clBuildProgram(nullptr, 0, nullptr, "", nullptr, nullptr));
  cl_program p = from_source(setup, kSource);
  print("build_notify_null_with_user_data", clBuildProgram(p, 0, nullptr, "", nullptr, &user_data));
  print("build_num_devices_without_list", clBuildProgram(p, 1, nullptr, "", nullptr, nullptr));
  print("build_list_without_num_devices", clBuildProgram(p, 0, &device, "", nullptr, nullptr));
  print("build_foreign_device", clBuildProgram(p, 1, &foreign_device, "", nullptr, nullptr));
  cl_device_id twice[2] = {device, foreign_device};
  print("build_one_foreign_of_two_devices", clBuildProgram(p, 2, twice, "", nullptr, nullptr));
  cl_device_id same_twice[2] = {device, device};
  print("build_duplicate_device", clBuildProgram(p, 2, same_twice, "", nullptr, nullptr));
  print("build_bad_option", clBuildProgram(p, 1, &device, "-this-is-not-an-option", nullptr, nullptr));
  print("build_bad_cl_std", clBuildProgram(p, 1, &device, "-cl-std=CL9.9", nullptr, nullptr));
  print("build_null_options", clBuildProgram(p, 1, &device, nullptr, nullptr, nullptr));
  clReleaseProgram(p);

  cl_program broken = from_source(setup, kBrokenSource);
  print("build_syntax_error", clBuildProgram(broken, 1, &device, "", nullptr, nullptr));
  cl_build_status status = CL_BUILD_NONE;
  cl_int code = clGetProgramBuildInfo(broken, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr);
  print("build_info_status_after_error", code, std::to_string(status));
  cl_int kernel_code = 0;
  cl_kernel k = clCreateKernel(broken, "broken", &kernel_code);
  print("create_kernel_after_failed_build", kernel_code);
  if (k) clReleaseKernel(k);
  print("build_syntax_error_async", clBuildProgram(broken, 1, &device, "", ignore_notify, nullptr));
  clReleaseProgram(broken);
}

void built_program_cases(const Setup& setup) {
  cl_device_id device = setup.device;
  cl_device_id foreign_device = setup.sub_device;
  cl_int code = 0;

  cl_program unbuilt = from_source(setup, kSource);
  cl_kernel k = clCreateKernel(unbuilt, "add_one", &code);
  print("create_kernel_program_not_built", code);
  if (k) clReleaseKernel(k);
  cl_uint count = 0;
  print("create_kernels_program_not_built", clCreateKernelsInProgram(unbuilt, 0, nullptr, &count));
  clReleaseProgram(unbuilt);

  // Built normally: on a warm cache the shim serves this one from a shadow program.
  cl_program p = from_source(setup, kSource);
  print("build_valid", clBuildProgram(p, 1, &device, "-cl-fast-relaxed-math", nullptr, nullptr));

  k = clCreateKernel(p, "no_such_kernel", &code);
  print("create_kernel_bad_name", code);
  if (k) clReleaseKernel(k);
  k = clCreateKernel(p, nullptr, &code);
  print("create_kernel_null_name", code);
  if (k) clReleaseKernel(k);
  k = clCreateKernel(p, "", &code);
  print("create_kernel_empty_name", code);
  if (k) clReleaseKernel(k);
  k = clCreateKernel(nullptr, "add_one", &code);
  print("create_kernel_null_program", code);
  if (k) clReleaseKernel(k);

  cl_kernel kernels[2] = {};
  print("create_kernels_too_few_slots", clCreateKernelsInProgram(p, 1, kernels, &count));
  print("create_kernels_count_only", clCreateKernelsInProgram(p, 0, nullptr, &count), std::to_string(count));
  print("create_kernels_null_program", clCreateKernelsInProgram(nullptr, 0, nullptr, &count));

  size_t size = 0;
  unsigned char small[1] = {};
  print("program_info_bad_param", clGetProgramInfo(p, 0xDEAD, sizeof small, small, &size));
  print("program_info_binary_sizes_too_small", clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, 1, small, nullptr));
  print("program_info_binaries_too_small", clGetProgramInfo(p, CL_PROGRAM_BINARIES, 1, small, nullptr));
  print("program_info_kernel_names_too_small", clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 1, small, nullptr));
  print("program_info_num_kernels_too_small", clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, 1, small, nullptr));
  print("program_info_null_program", clGetProgramInfo(nullptr, CL_PROGRAM_NUM_KERNELS, 0, nullptr, &size));
  size_t num_kernels = 0;
  code = clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof num_kernels, &num_kernels, nullptr);
  print("program_info_num_kernels", code, std::to_string(num_kernels));
  cl_uint num_devices = 0;
  code = clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof num_devices, &num_devices, nullptr);
  print("program_info_num_devices", code, std::to_string(num_devices));
  code = clGetProgramInfo(p, CL_PROGRAM_DEVICES, 0, nullptr, &size);
  print("program_info_devices_size", code, std::to_string(size));
  code = clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, nullptr, &size);
  print("program_info_source_size", code, std::to_string(size));
  code = clGetProgramInfo(p, CL_PROGRAM_IL, 0, nullptr, &size);
  print("program_info_il_size", code, std::to_string(size));
  code = clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size);
  print("program_info_kernel_names_size", code, std::to_string(size));

  print("build_info_bad_param", clGetProgramBuildInfo(p, device, 0xDEAD, sizeof small, small, &size));
  print("build_info_status_too_small", clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, 1, small, nullptr));
  print("build_info_options_too_small", clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_OPTIONS, 1, small, nullptr));
  print("build_info_null_device", clGetProgramBuildInfo(p, nullptr, CL_PROGRAM_BUILD_STATUS, 0, nullptr, &size));
  print("build_info_foreign_device",
        clGetProgramBuildInfo(p, foreign_device, CL_PROGRAM_BUILD_STATUS, 0, nullptr, &size));
  print("build_info_null_program", clGetProgramBuildInfo(nullptr, device, CL_PROGRAM_BUILD_STATUS, 0, nullptr, &size));
  cl_program_binary_type binary_type = 0;
  code = clGetProgramBuildInfo(p, device, CL_PROGRAM_BINARY_TYPE, sizeof binary_type, &binary_type, nullptr);
  print("build_info_binary_type", code, std::to_string(binary_type));
  char options[64] = {};
  code = clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_OPTIONS, sizeof options, options, nullptr);
  print("build_info_options", code, options);

  print("spec_constant_on_source_program", clSetProgramSpecializationConstant(p, 0, sizeof code, &code));
  print("spec_constant_null_program", clSetProgramSpecializationConstant(nullptr, 0, sizeof code, &code));

  // A kernel exists: the program may not be rebuilt, whoever built it.
  k = clCreateKernel(p, "add_one", &code);
  print("create_kernel_valid", code);
  cl_program owner = nullptr;
  code = clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof owner, &owner, nullptr);
  print("kernel_info_program_is_app_program", code, owner == p ? "yes" : "no");
  print("kernel_info_program_too_small", clGetKernelInfo(k, CL_KERNEL_PROGRAM, 1, small, nullptr));
  print("rebuild_with_kernel_attached", clBuildProgram(p, 1, &device, "", nullptr, nullptr));
  clReleaseKernel(k);
  print("rebuild_after_kernel_released", clBuildProgram(p, 1, &device, "", nullptr, nullptr));
  print("release_built_program", clReleaseProgram(p));

  print("compile_null_program", clCompileProgram(nullptr, 0, nullptr, "", 0, nullptr, nullptr, nullptr, nullptr));
  cl_program linked = clLinkProgram(setup.context, 0, nullptr, "", 0, nullptr, nullptr, nullptr, &code);
  print("link_no_inputs", code);
  if (linked) clReleaseProgram(linked);
}

}  // namespace

int main() {
  Setup setup;
  if (!open_device(&setup)) {
    std::fprintf(stderr, "opencl_misuse: no OpenCL device\n");
    return 2;
  }
  creation_cases(setup);
  build_cases(setup);
  built_program_cases(setup);
  clReleaseContext(setup.context);
  std::printf("done\n");
  return 0;
}
