// The test driver's OpenCL objects. Every ICD object starts with the dispatch table pointer: the
// loader (ocl-icd) finds the driver's functions through it.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hashing/spirv_module.hpp"

extern cl_icd_dispatch g_test_il_dispatch;

struct _cl_platform_id {
  const cl_icd_dispatch* dispatch = &g_test_il_dispatch;
};

struct _cl_device_id {
  const cl_icd_dispatch* dispatch = &g_test_il_dispatch;
};

struct _cl_context {
  const cl_icd_dispatch* dispatch = &g_test_il_dispatch;
  std::atomic<cl_uint> references{1};
};

struct _cl_program {
  const cl_icd_dispatch* dispatch = &g_test_il_dispatch;
  std::atomic<cl_uint> references{1};
  cl_context context = nullptr;
  std::vector<std::uint8_t> il;                // empty for programs created from a binary
  jitcache::SpirvModuleInfo module;   // what the IL declares
  std::map<std::uint32_t, std::uint64_t> spec_values;  // set by the app, by SpecId
  std::string binary;                          // after a successful build, or as created
  std::vector<std::string> kernel_names;       // of the built binary
  cl_build_status status = CL_BUILD_NONE;
  std::string options;
  std::string log;
};

struct _cl_kernel {
  const cl_icd_dispatch* dispatch = &g_test_il_dispatch;
  std::atomic<cl_uint> references{1};
  cl_program program = nullptr;
  std::string name;
};

namespace test_il {

extern _cl_platform_id g_platform;
extern _cl_device_id g_device;

// Copies `size` bytes of `value` out the way every clGet*Info does.
cl_int return_info(const void* value, size_t size, size_t param_value_size, void* param_value,
                   size_t* param_value_size_ret);
cl_int return_string(const std::string& value, size_t param_value_size, void* param_value,
                     size_t* param_value_size_ret);

}  // namespace test_il
