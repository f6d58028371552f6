#include "shim/opencl/program_queries.hpp"

#include <algorithm>
#include <cstring>

namespace jitcache::opencl {

std::string program_string(cl_program program, cl_program_info param) {
  std::vector<char> text = program_array<char>(program, param);
  return std::string(text.data(), text.empty() ? 0 : std::char_traits<char>::length(text.data()));
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string log(size, '\0');
  if (next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) {
    return {};
  }
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// The binaries the driver holds for `program`, one per device of `devices` (empty if none).
std::vector<std::string> read_binaries(cl_program program, const std::vector<cl_device_id>& devices) {
  std::vector<cl_device_id> program_devices = program_array<cl_device_id>(program, CL_PROGRAM_DEVICES);
  std::vector<size_t> sizes = program_array<size_t>(program, CL_PROGRAM_BINARY_SIZES);
  std::vector<std::string> binaries(devices.size());
  if (sizes.size() != program_devices.size()) return binaries;
  std::vector<std::string> buffers(sizes.size());
  std::vector<unsigned char*> pointers(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    buffers[i].resize(sizes[i]);
    pointers[i] = reinterpret_cast<unsigned char*>(buffers[i].data());
  }
  if (next().clGetProgramInfo(program, CL_PROGRAM_BINARIES, pointers.size() * sizeof(unsigned char*),
                              pointers.data(), nullptr) != CL_SUCCESS) {
    return binaries;
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    for (size_t i = 0; i < program_devices.size(); ++i) {
      if (program_devices[i] == devices[d]) binaries[d] = std::move(buffers[i]);
    }
  }
  return binaries;
}

bool build_succeeded(cl_program program, const std::vector<cl_device_id>& devices) {
  for (cl_device_id device : devices) {
    cl_build_status status = CL_BUILD_NONE;
    next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr);
    if (status != CL_BUILD_SUCCESS) return false;
  }
  return true;
}

std::vector<cl_device_id> devices_to_build(cl_program program, cl_uint num_devices, const cl_device_id* device_list) {
  std::vector<cl_device_id> program_devices = program_array<cl_device_id>(program, CL_PROGRAM_DEVICES);
  if (!num_devices || !device_list) return program_devices;
  std::vector<cl_device_id> requested(device_list, device_list + num_devices);
  for (auto it = requested.begin(); it != requested.end(); ++it) {
    if (std::find(program_devices.begin(), program_devices.end(), *it) == program_devices.end()) return {};
    if (std::find(requested.begin(), it, *it) != it) return {};
  }
  return requested;
}

std::vector<std::string> kernel_names_of(cl_program program) {
  cl_uint count = 0;
  if (next().clCreateKernelsInProgram(program, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_kernel> kernels(count);
  if (next().clCreateKernelsInProgram(program, count, kernels.data(), &count) != CL_SUCCESS) return {};
  std::vector<std::string> names;
  for (cl_uint i = 0; i < count && i < kernels.size(); ++i) {
    size_t size = 0;
    std::string name;
    if (next().clGetKernelInfo(kernels[i], CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size) == CL_SUCCESS && size > 0) {
      name.resize(size);
      if (next().clGetKernelInfo(kernels[i], CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr) != CL_SUCCESS) {
        name.clear();
      }
      while (!name.empty() && name.back() == '\0') name.pop_back();
    }
    if (!name.empty()) names.push_back(std::move(name));
    next().clReleaseKernel(kernels[i]);
  }
  return names;
}

cl_int answer_binary_query(cl_program_info param, const std::vector<const std::string*>& binaries,
                           size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  const size_t size = binaries.size() * (param == CL_PROGRAM_BINARY_SIZES ? sizeof(size_t) : sizeof(unsigned char*));
  if (param_value && param_value_size < size) return CL_INVALID_VALUE;
  if (param_value) {
    for (size_t i = 0; i < binaries.size(); ++i) {
      if (param == CL_PROGRAM_BINARY_SIZES) {
        static_cast<size_t*>(param_value)[i] = binaries[i]->size();
      } else if (unsigned char* buffer = static_cast<unsigned char**>(param_value)[i]) {
        std::memcpy(buffer, binaries[i]->data(), binaries[i]->size());
      }
    }
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

}  // namespace jitcache::opencl
