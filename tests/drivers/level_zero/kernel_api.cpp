// Kernels are looked up by name in their module's entry points.
#include <algorithm>
#include <memory>

#include "copy_string.hpp"
#include "driver_objects.hpp"
#include "entry_points.hpp"

namespace jitcache::test_ze {

ze_result_t kernel_create(ze_module_handle_t module, const ze_kernel_desc_t* desc, ze_kernel_handle_t* kernel) {
  if (module == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || desc->pKernelName == nullptr || kernel == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto owner = modules().find(module);
  if (!owner) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const std::string name = desc->pKernelName;
  if (std::find(owner->kernel_names.begin(), owner->kernel_names.end(), name) == owner->kernel_names.end()) {
    return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
  }
  ++owner->live_kernels;
  *kernel = kernels().add(std::make_shared<TestKernel>(TestKernel{std::move(owner), name}));
  return ZE_RESULT_SUCCESS;
}

ze_result_t kernel_destroy(ze_kernel_handle_t kernel) {
  if (kernel == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto removed = kernels().remove(kernel);
  if (!removed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  --removed->module->live_kernels;
  return ZE_RESULT_SUCCESS;
}

ze_result_t kernel_get_name(ze_kernel_handle_t kernel, size_t* size, char* name) {
  if (kernel == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto found = kernels().find(kernel);
  if (!found) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  copy_string_out(found->name, size, name);
  return ZE_RESULT_SUCCESS;
}

}  // namespace jitcache::test_ze
