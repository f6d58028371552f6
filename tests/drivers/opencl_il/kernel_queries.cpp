// Kernel argument and work-group queries, as a real driver answers them. Test-driver convention
// (like drivers whose binaries drop it): argument info exists only for programs built from IL
// with -cl-kernel-arg-info; a program created from a binary answers CL_KERNEL_ARG_INFO_NOT_AVAILABLE.
// Every kernel of the fixture has one argument, `__global int* out`.
#include "icd_objects.hpp"

using namespace test_il;

namespace {

template <typename T>
cl_int return_value(T value, size_t size, void* out, size_t* size_ret) {
  return return_info(&value, sizeof value, size, out, size_ret);
}

bool has_arg_info(const _cl_program& program) {
  return !program.il.empty() && program.options.find("-cl-kernel-arg-info") != std::string::npos;
}

}  // namespace

cl_int CL_API_CALL test_il_clGetKernelArgInfo(cl_kernel kernel, cl_uint arg, cl_kernel_arg_info param, size_t size,
                                              void* value, size_t* size_ret) {
  if (!kernel) return CL_INVALID_KERNEL;
  if (arg >= 1) return CL_INVALID_ARG_INDEX;
  if (!has_arg_info(*kernel->program)) return CL_KERNEL_ARG_INFO_NOT_AVAILABLE;
  switch (param) {
    case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
      return return_value<cl_kernel_arg_address_qualifier>(CL_KERNEL_ARG_ADDRESS_GLOBAL, size, value, size_ret);
    case CL_KERNEL_ARG_ACCESS_QUALIFIER:
      return return_value<cl_kernel_arg_access_qualifier>(CL_KERNEL_ARG_ACCESS_NONE, size, value, size_ret);
    case CL_KERNEL_ARG_TYPE_NAME: return return_string("int*", size, value, size_ret);
    case CL_KERNEL_ARG_TYPE_QUALIFIER:
      return return_value<cl_kernel_arg_type_qualifier>(CL_KERNEL_ARG_TYPE_NONE, size, value, size_ret);
    case CL_KERNEL_ARG_NAME: return return_string("out", size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL test_il_clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                                    cl_kernel_work_group_info param, size_t size, void* value,
                                                    size_t* size_ret) {
  if (!kernel) return CL_INVALID_KERNEL;
  if (device && device != &g_device) return CL_INVALID_DEVICE;
  switch (param) {
    case CL_KERNEL_WORK_GROUP_SIZE: return return_value<size_t>(64, size, value, size_ret);
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE: {
      const size_t none[3] = {0, 0, 0};
      return return_info(none, sizeof none, size, value, size_ret);
    }
    case CL_KERNEL_LOCAL_MEM_SIZE: return return_value<cl_ulong>(0, size, value, size_ret);
    case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: return return_value<size_t>(8, size, value, size_ret);
    case CL_KERNEL_PRIVATE_MEM_SIZE: return return_value<cl_ulong>(0, size, value, size_ret);
    default: return CL_INVALID_VALUE;  // CL_KERNEL_GLOBAL_WORK_SIZE: not a custom device
  }
}

cl_int CL_API_CALL test_il_clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id, cl_kernel_sub_group_info, size_t,
                                                   const void*, size_t, void*, size_t*) {
  return kernel ? CL_INVALID_OPERATION : CL_INVALID_KERNEL;  // no sub-groups on this device
}
