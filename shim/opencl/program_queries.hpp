// Reading a program's state back from the driver (never through the hooks).
#pragma once

#include <string>
#include <vector>

#include "shim/opencl/next_functions.hpp"

namespace jitcache::opencl {

template <typename T>
std::vector<T> program_array(cl_program program, cl_program_info param) {
  size_t size = 0;
  if (next().clGetProgramInfo(program, param, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::vector<T> values(size / sizeof(T));
  if (next().clGetProgramInfo(program, param, size, values.data(), nullptr) != CL_SUCCESS) return {};
  return values;
}

std::string program_string(cl_program program, cl_program_info param);
std::string build_log(cl_program program, cl_device_id device);
// The program's kernel names, from kernels made and released here (clCreateKernelsInProgram and
// CL_KERNEL_FUNCTION_NAME), never CL_PROGRAM_KERNEL_NAMES: NVIDIA's driver corrupts its heap
// answering that for a kernel name of 300 characters or more (docs/opencl-coverage.md).
std::vector<std::string> kernel_names_of(cl_program program);
bool build_succeeded(cl_program program, const std::vector<cl_device_id>& devices);

// The binaries the driver holds for `program`, one per device of `devices` (empty if none).
std::vector<std::string> read_binaries(cl_program program, const std::vector<cl_device_id>& devices);

// The answer to CL_PROGRAM_BINARY_SIZES or CL_PROGRAM_BINARIES (`param`) of a program whose
// binaries, one per CL_PROGRAM_DEVICES entry, are `binaries`: sizes copied out, or each binary
// copied into the app's buffer for it (a null buffer skipped); a too-small array is CL_INVALID_VALUE.
cl_int answer_binary_query(cl_program_info param, const std::vector<const std::string*>& binaries,
                           size_t param_value_size, void* param_value, size_t* param_value_size_ret);

// The devices a build call targets: the list given, else every device of the program. Empty when
// the list names a device the program is not for, or one twice: that is the driver's to judge, and
// such a list must never be queried, keyed or used to load (and then drop as "rejected") a good entry.
std::vector<cl_device_id> devices_to_build(cl_program program, cl_uint num_devices, const cl_device_id* device_list);

}  // namespace jitcache::opencl
