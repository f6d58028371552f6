// What the ICD loader sees of the test driver: the cl_khr_icd entry points and the dispatch
// table every object points to. Entries this driver does not implement stay null.
#include <cstring>

#include "icd_objects.hpp"

#define TEST_IL_FUNCTIONS(X)                                                                              \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext)         \
  X(clRetainContext) X(clReleaseContext) X(clGetContextInfo) X(clCreateProgramWithSource)                 \
  X(clCreateProgramWithIL) X(clCreateProgramWithBinary) X(clSetProgramSpecializationConstant)             \
  X(clBuildProgram) X(clGetProgramInfo) X(clGetProgramBuildInfo) X(clRetainProgram) X(clReleaseProgram)   \
  X(clCreateKernel) X(clCreateKernelsInProgram) X(clGetKernelInfo) X(clRetainKernel) X(clReleaseKernel) X(clGetKernelArgInfo)         \
  X(clGetKernelWorkGroupInfo) X(clGetKernelSubGroupInfo)

#define TEST_IL_DECLARE(name) decltype(::name) test_il_##name;
TEST_IL_FUNCTIONS(TEST_IL_DECLARE)
#undef TEST_IL_DECLARE

cl_icd_dispatch g_test_il_dispatch = [] {
  cl_icd_dispatch dispatch;
  std::memset(&dispatch, 0, sizeof dispatch);
#define TEST_IL_FILL(name) dispatch.name = test_il_##name;
  TEST_IL_FUNCTIONS(TEST_IL_FILL)
#undef TEST_IL_FILL
  return dispatch;
}();

#define TEST_IL_EXPORT extern "C" __attribute__((visibility("default")))

TEST_IL_EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id* platforms,
                                                         cl_uint* num_platforms) {
  return test_il_clGetPlatformIDs(num_entries, platforms, num_platforms);
}

TEST_IL_EXPORT cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info param, size_t size,
                                                    void* value, size_t* size_ret) {
  return test_il_clGetPlatformInfo(platform, param, size, value, size_ret);
}

TEST_IL_EXPORT void* CL_API_CALL clGetExtensionFunctionAddress(const char* name) {
  if (name && std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0) return reinterpret_cast<void*>(clIcdGetPlatformIDsKHR);
  return nullptr;
}
