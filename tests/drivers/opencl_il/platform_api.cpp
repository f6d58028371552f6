// Platform, device and context of the test driver: one platform with one device that takes
// SPIR-V ("SPIR-V_1.0") and nothing else (no OpenCL C compiler).
#include <cstring>

#include "icd_objects.hpp"

namespace test_il {

_cl_platform_id g_platform;
_cl_device_id g_device;

cl_int return_info(const void* value, size_t size, size_t param_value_size, void* param_value,
                   size_t* param_value_size_ret) {
  if (param_value) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, value, size);
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

cl_int return_string(const std::string& value, size_t param_value_size, void* param_value,
                     size_t* param_value_size_ret) {
  return return_info(value.c_str(), value.size() + 1, param_value_size, param_value, param_value_size_ret);
}

}  // namespace test_il

using namespace test_il;

namespace {

template <typename T>
cl_int return_value(T value, size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  return return_info(&value, sizeof value, param_value_size, param_value, param_value_size_ret);
}

}  // namespace

cl_int CL_API_CALL test_il_clGetPlatformIDs(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  if ((num_entries == 0 && platforms) || (!platforms && !num_platforms)) return CL_INVALID_VALUE;
  if (platforms) platforms[0] = &g_platform;
  if (num_platforms) *num_platforms = 1;
  return CL_SUCCESS;
}

cl_int CL_API_CALL test_il_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param, size_t size,
                                             void* value, size_t* size_ret) {
  if (platform != &g_platform) return CL_INVALID_PLATFORM;
  switch (param) {
    case CL_PLATFORM_PROFILE: return return_string("FULL_PROFILE", size, value, size_ret);
    case CL_PLATFORM_VERSION: return return_string("OpenCL 3.0 jitcache-test-il", size, value, size_ret);
    case CL_PLATFORM_NAME: return return_string("jitcache test IL driver", size, value, size_ret);
    case CL_PLATFORM_VENDOR: return return_string("jitcache tests", size, value, size_ret);
    case CL_PLATFORM_EXTENSIONS: return return_string("cl_khr_icd cl_khr_il_program", size, value, size_ret);
    case CL_PLATFORM_ICD_SUFFIX_KHR: return return_string("JCIL", size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL test_il_clGetDeviceIDs(cl_platform_id platform, cl_device_type type, cl_uint num_entries,
                                          cl_device_id* devices, cl_uint* num_devices) {
  if (platform != &g_platform) return CL_INVALID_PLATFORM;
  if ((num_entries == 0 && devices) || (!devices && !num_devices)) return CL_INVALID_VALUE;
  if (!(type & (CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_DEFAULT))) return CL_DEVICE_NOT_FOUND;
  if (devices) devices[0] = &g_device;
  if (num_devices) *num_devices = 1;
  return CL_SUCCESS;
}

cl_int CL_API_CALL test_il_clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size, void* value,
                                           size_t* size_ret) {
  if (device != &g_device) return CL_INVALID_DEVICE;
  switch (param) {
    case CL_DEVICE_TYPE: return return_value<cl_device_type>(CL_DEVICE_TYPE_ACCELERATOR, size, value, size_ret);
    case CL_DEVICE_VENDOR_ID: return return_value<cl_uint>(0x10ce, size, value, size_ret);
    case CL_DEVICE_ADDRESS_BITS: return return_value<cl_uint>(64, size, value, size_ret);
    case CL_DEVICE_AVAILABLE:
    case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE: return return_value<cl_bool>(CL_TRUE, size, value, size_ret);
    case CL_DEVICE_PLATFORM: return return_value<cl_platform_id>(&g_platform, size, value, size_ret);
    case CL_DEVICE_NAME: return return_string("jitcache-test-il-device", size, value, size_ret);
    case CL_DEVICE_VENDOR: return return_string("jitcache tests", size, value, size_ret);
    case CL_DEVICE_VERSION: return return_string("OpenCL 3.0 jitcache-test-il", size, value, size_ret);
    case CL_DRIVER_VERSION: return return_string("1.0", size, value, size_ret);
    case CL_DEVICE_OPENCL_C_VERSION: return return_string("OpenCL C 1.2 ", size, value, size_ret);
    case CL_DEVICE_PROFILE: return return_string("FULL_PROFILE", size, value, size_ret);
    case CL_DEVICE_EXTENSIONS: return return_string("cl_khr_il_program", size, value, size_ret);
    case CL_DEVICE_IL_VERSION: return return_string("SPIR-V_1.0", size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

cl_context CL_API_CALL test_il_clCreateContext(const cl_context_properties*, cl_uint num_devices,
                                               const cl_device_id* devices,
                                               void(CL_CALLBACK*)(const char*, const void*, size_t, void*), void*,
                                               cl_int* errcode_ret) {
  cl_int status = CL_SUCCESS;
  if (num_devices == 0 || !devices) status = CL_INVALID_VALUE;
  for (cl_uint i = 0; status == CL_SUCCESS && i < num_devices; ++i) {
    if (devices[i] != &g_device) status = CL_INVALID_DEVICE;
  }
  if (errcode_ret) *errcode_ret = status;
  return status == CL_SUCCESS ? new _cl_context : nullptr;
}

cl_int CL_API_CALL test_il_clRetainContext(cl_context context) {
  if (!context) return CL_INVALID_CONTEXT;
  ++context->references;
  return CL_SUCCESS;
}

cl_int CL_API_CALL test_il_clReleaseContext(cl_context context) {
  if (!context) return CL_INVALID_CONTEXT;
  if (--context->references == 0) delete context;
  return CL_SUCCESS;
}

cl_int CL_API_CALL test_il_clGetContextInfo(cl_context context, cl_context_info param, size_t size, void* value,
                                            size_t* size_ret) {
  if (!context) return CL_INVALID_CONTEXT;
  switch (param) {
    case CL_CONTEXT_REFERENCE_COUNT: return return_value<cl_uint>(context->references, size, value, size_ret);
    case CL_CONTEXT_NUM_DEVICES: return return_value<cl_uint>(1, size, value, size_ret);
    case CL_CONTEXT_DEVICES: return return_value<cl_device_id>(&g_device, size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}
