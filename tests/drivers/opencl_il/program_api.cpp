// Programs and kernels of the test driver. A build from SPIR-V is a real "compile": it reads the
// module, burns CPU time proportional to its size, applies the specialization constants, counts
// itself in JITCACHE_TEST_IL_COMPILE_LOG and produces a checksummed binary. A program created from
// a binary is accepted only if it is one of this driver's binaries for this device.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "../level_zero/compile_cost.hpp"
#include "icd_objects.hpp"
#include "il_binary.hpp"

using namespace test_il;

namespace {

constexpr double kCompileCostScale = 4.0;  // ~12 ms per KB of SPIR-V

template <typename T>
cl_int return_value(T value, size_t size, void* out, size_t* size_ret) {
  return return_info(&value, sizeof value, size, out, size_ret);
}

// One line per real compile, written with a single O_APPEND write so processes never interleave.
void count_compile(const std::string& il_digest) {
  const char* path = std::getenv("JITCACHE_TEST_IL_COMPILE_LOG");
  if (!path || !*path) return;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string line = "compile " + il_digest + "\n";
  ssize_t written = ::write(fd, line.data(), line.size());
  (void)written;
  ::close(fd);
}

bool devices_valid(cl_uint num_devices, const cl_device_id* devices) {
  if ((num_devices == 0) != (devices == nullptr)) return false;
  for (cl_uint i = 0; i < num_devices; ++i) {
    if (devices[i] != &g_device) return false;
  }
  return true;
}

// The compile: defaults from the module, overridden by what the app set.
cl_int compile(cl_program program) {
  test_il::CompiledModule module;
  module.device = "jitcache-test-il-device";
  module.il_digest = fnv1a_hex(program->il.data(), program->il.size());
  module.kernel_names = program->module.kernel_names;
  for (const auto& constant : program->module.spec_constants) {
    auto set = program->spec_values.find(constant.spec_id);
    module.spec_values[constant.spec_id] = set != program->spec_values.end() ? set->second : constant.default_bits;
  }
  jitcache::test_ze::burn_compile_time(program->il, kCompileCostScale);
  count_compile(module.il_digest);
  program->binary = encode_binary(module);
  program->kernel_names = module.kernel_names;
  program->log = "compiled " + std::to_string(program->il.size()) + " bytes of SPIR-V";
  return CL_SUCCESS;
}

}  // namespace

cl_program CL_API_CALL test_il_clCreateProgramWithSource(cl_context, cl_uint, const char**, const size_t*,
                                                         cl_int* errcode_ret) {
  if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;  // this device only takes SPIR-V
  return nullptr;
}

cl_program CL_API_CALL test_il_clCreateProgramWithIL(cl_context context, const void* il, size_t length,
                                                     cl_int* errcode_ret) {
  cl_int status = !context ? CL_INVALID_CONTEXT : (!il || length == 0) ? CL_INVALID_VALUE : CL_SUCCESS;
  _cl_program* program = nullptr;
  if (status == CL_SUCCESS) {
    const auto* bytes = static_cast<const std::uint8_t*>(il);
    jitcache::SpirvReadResult read = jitcache::read_spirv_module({bytes, length});
    if (!read.info) {
      status = CL_INVALID_VALUE;
    } else {
      program = new _cl_program;
      program->context = context;
      program->il.assign(bytes, bytes + length);
      program->module = std::move(*read.info);
    }
  }
  if (errcode_ret) *errcode_ret = status;
  return program;
}

cl_program CL_API_CALL test_il_clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                         const cl_device_id* devices, const size_t* lengths,
                                                         const unsigned char** binaries, cl_int* binary_status,
                                                         cl_int* errcode_ret) {
  cl_int status = CL_SUCCESS;
  if (!context) status = CL_INVALID_CONTEXT;
  else if (num_devices != 1 || !devices_valid(num_devices, devices)) status = CL_INVALID_DEVICE;
  else if (!lengths || !binaries || !binaries[0] || lengths[0] == 0) status = CL_INVALID_VALUE;
  std::optional<CompiledModule> module;
  if (status == CL_SUCCESS) {
    module = decode_binary(std::string(reinterpret_cast<const char*>(binaries[0]), lengths[0]));
    if (!module || module->device != "jitcache-test-il-device") status = CL_INVALID_BINARY;
  }
  if (binary_status) binary_status[0] = status == CL_INVALID_BINARY ? CL_INVALID_BINARY : CL_SUCCESS;
  if (errcode_ret) *errcode_ret = status;
  if (status != CL_SUCCESS) return nullptr;
  auto* program = new _cl_program;
  program->context = context;
  program->binary.assign(reinterpret_cast<const char*>(binaries[0]), lengths[0]);
  program->kernel_names = module->kernel_names;
  return program;
}

cl_int CL_API_CALL test_il_clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id, size_t spec_size,
                                                              const void* spec_value) {
  if (!program) return CL_INVALID_PROGRAM;
  if (program->il.empty()) return CL_INVALID_PROGRAM;  // only IL programs have constants
  for (const auto& constant : program->module.spec_constants) {
    if (constant.spec_id != spec_id) continue;
    if (!spec_value || spec_size != constant.size_bytes) return CL_INVALID_VALUE;
    std::uint64_t value = 0;
    std::memcpy(&value, spec_value, spec_size);  // little-endian host, zero-extended
    program->spec_values[spec_id] = value;
    return CL_SUCCESS;
  }
  return CL_INVALID_SPEC_ID;
}

cl_int CL_API_CALL test_il_clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id* devices,
                                          const char* options, void(CL_CALLBACK* notify)(cl_program, void*),
                                          void* user_data) {
  if (!program) return CL_INVALID_PROGRAM;
  if (!devices_valid(num_devices, devices)) return CL_INVALID_DEVICE;
  if (!notify && user_data) return CL_INVALID_VALUE;
  program->options = options ? options : "";
  cl_int status = program->il.empty() ? CL_SUCCESS : compile(program);  // a binary needs no compile
  program->status = status == CL_SUCCESS ? CL_BUILD_SUCCESS : CL_BUILD_ERROR;
  if (notify) notify(program, user_data);
  return status;
}

cl_int CL_API_CALL test_il_clGetProgramInfo(cl_program program, cl_program_info param, size_t size, void* value,
                                            size_t* size_ret) {
  if (!program) return CL_INVALID_PROGRAM;
  switch (param) {
    case CL_PROGRAM_REFERENCE_COUNT: return return_value<cl_uint>(program->references, size, value, size_ret);
    case CL_PROGRAM_CONTEXT: return return_value<cl_context>(program->context, size, value, size_ret);
    case CL_PROGRAM_NUM_DEVICES: return return_value<cl_uint>(1, size, value, size_ret);
    case CL_PROGRAM_DEVICES: return return_value<cl_device_id>(&g_device, size, value, size_ret);
    case CL_PROGRAM_SOURCE: return return_string("", size, value, size_ret);
    case CL_PROGRAM_IL: return return_info(program->il.data(), program->il.size(), size, value, size_ret);
    case CL_PROGRAM_BINARY_SIZES: return return_value<size_t>(program->binary.size(), size, value, size_ret);
    case CL_PROGRAM_BINARIES: {
      if (value) {
        if (size < sizeof(unsigned char*)) return CL_INVALID_VALUE;
        auto* destination = *static_cast<unsigned char**>(value);
        if (destination) std::memcpy(destination, program->binary.data(), program->binary.size());
      }
      if (size_ret) *size_ret = sizeof(unsigned char*);
      return CL_SUCCESS;
    }
    case CL_PROGRAM_NUM_KERNELS:
    case CL_PROGRAM_KERNEL_NAMES: {
      if (program->status != CL_BUILD_SUCCESS) return CL_INVALID_PROGRAM_EXECUTABLE;
      if (param == CL_PROGRAM_NUM_KERNELS) return return_value<size_t>(program->kernel_names.size(), size, value, size_ret);
      std::string names;
      for (const std::string& name : program->kernel_names) names += (names.empty() ? "" : ";") + name;
      return return_string(names, size, value, size_ret);
    }
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL test_il_clGetProgramBuildInfo(cl_program program, cl_device_id device, cl_program_build_info param,
                                                 size_t size, void* value, size_t* size_ret) {
  if (!program) return CL_INVALID_PROGRAM;
  if (device != &g_device) return CL_INVALID_DEVICE;
  switch (param) {
    case CL_PROGRAM_BUILD_STATUS: return return_value<cl_build_status>(program->status, size, value, size_ret);
    case CL_PROGRAM_BUILD_OPTIONS: return return_string(program->options, size, value, size_ret);
    case CL_PROGRAM_BUILD_LOG: return return_string(program->log, size, value, size_ret);
    case CL_PROGRAM_BINARY_TYPE:
      return return_value<cl_program_binary_type>(
          program->status == CL_BUILD_SUCCESS ? CL_PROGRAM_BINARY_TYPE_EXECUTABLE : CL_PROGRAM_BINARY_TYPE_NONE, size,
          value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL test_il_clRetainProgram(cl_program program) {
  if (!program) return CL_INVALID_PROGRAM;
  ++program->references;
  return CL_SUCCESS;
}

cl_int CL_API_CALL test_il_clReleaseProgram(cl_program program) {
  if (!program) return CL_INVALID_PROGRAM;
  if (--program->references == 0) delete program;
  return CL_SUCCESS;
}

cl_kernel CL_API_CALL test_il_clCreateKernel(cl_program program, const char* name, cl_int* errcode_ret) {
  cl_int status = CL_SUCCESS;
  if (!program) status = CL_INVALID_PROGRAM;
  else if (program->status != CL_BUILD_SUCCESS) status = CL_INVALID_PROGRAM_EXECUTABLE;
  else if (!name) status = CL_INVALID_VALUE;
  else {
    status = CL_INVALID_KERNEL_NAME;
    for (const std::string& kernel_name : program->kernel_names) status = kernel_name == name ? CL_SUCCESS : status;
  }
  if (errcode_ret) *errcode_ret = status;
  if (status != CL_SUCCESS) return nullptr;
  ++program->references;  // a kernel keeps its program alive
  auto* kernel = new _cl_kernel;
  kernel->program = program;
  kernel->name = name;
  return kernel;
}

cl_int CL_API_CALL test_il_clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                                                    cl_uint* num_kernels_ret) {
  if (!program) return CL_INVALID_PROGRAM;
  if (program->status != CL_BUILD_SUCCESS) return CL_INVALID_PROGRAM_EXECUTABLE;
  const auto count = static_cast<cl_uint>(program->kernel_names.size());
  if (kernels && num_kernels < count) return CL_INVALID_VALUE;
  for (cl_uint i = 0; kernels && i < count; ++i) {
    kernels[i] = test_il_clCreateKernel(program, program->kernel_names[i].c_str(), nullptr);
  }
  if (num_kernels_ret) *num_kernels_ret = count;
  return CL_SUCCESS;
}

cl_int CL_API_CALL test_il_clGetKernelInfo(cl_kernel kernel, cl_kernel_info param, size_t size, void* value,
                                           size_t* size_ret) {
  if (!kernel) return CL_INVALID_KERNEL;
  switch (param) {
    case CL_KERNEL_FUNCTION_NAME: return return_string(kernel->name, size, value, size_ret);
    case CL_KERNEL_NUM_ARGS: return return_value<cl_uint>(1, size, value, size_ret);
    case CL_KERNEL_REFERENCE_COUNT: return return_value<cl_uint>(kernel->references, size, value, size_ret);
    case CL_KERNEL_CONTEXT: return return_value<cl_context>(kernel->program->context, size, value, size_ret);
    case CL_KERNEL_PROGRAM: return return_value<cl_program>(kernel->program, size, value, size_ret);
    case CL_KERNEL_ATTRIBUTES: {
      // Test-driver convention: the specialization constants the binary was compiled with.
      std::optional<CompiledModule> module = decode_binary(kernel->program->binary);
      return return_string(module ? "spec " + describe_spec_values(*module) : "", size, value, size_ret);
    }
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL test_il_clRetainKernel(cl_kernel kernel) {
  if (!kernel) return CL_INVALID_KERNEL;
  ++kernel->references;
  return CL_SUCCESS;
}

cl_int CL_API_CALL test_il_clReleaseKernel(cl_kernel kernel) {
  if (!kernel) return CL_INVALID_KERNEL;
  if (--kernel->references == 0) {
    test_il_clReleaseProgram(kernel->program);
    delete kernel;
  }
  return CL_SUCCESS;
}
