// Module creation from SPIR-V or native binaries, and the module queries.
#include <algorithm>
#include <cstring>
#include <memory>
#include <span>

#include "driver_objects.hpp"
#include "entry_points.hpp"
#include "module_builder.hpp"

namespace jitcache::test_ze {
namespace {

std::shared_ptr<TestModule> make_module(BuildOutcome&& built) {
  auto module = std::make_shared<TestModule>();
  module->native_binary = std::move(built.native_binary);
  module->kernel_names = std::move(built.kernel_names);
  for (const std::string& name : module->kernel_names) module->kernel_name_pointers.push_back(name.c_str());
  return module;
}

ze_result_t check_arguments(ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc,
                            ze_module_handle_t* module) {
  if (context == nullptr || device == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || desc->pInputModule == nullptr || module == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  if (!contexts().find(context) || device != the_device()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV && desc->format != ZE_MODULE_FORMAT_NATIVE) {
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  }
  if (desc->inputSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t module_create(ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc,
                          ze_module_handle_t* module, ze_module_build_log_handle_t* build_log) {
  if (ze_result_t result = check_arguments(context, device, desc, module); result != ZE_RESULT_SUCCESS) {
    return result;
  }
  const std::span input(desc->pInputModule, desc->inputSize);
  // Specialization constants and build flags apply to SPIR-V only; a native binary is final.
  BuildOutcome built = desc->format == ZE_MODULE_FORMAT_IL_SPIRV
                           ? compile_spirv(input, desc->pBuildFlags, desc->pConstants)
                           : load_native_binary(input);
  // The log exists whether or not the build worked: a failed build is when callers need it most.
  if (build_log != nullptr) {
    *build_log = build_logs().add(std::make_shared<TestBuildLog>(TestBuildLog{built.log}));
  }
  if (built.result != ZE_RESULT_SUCCESS) {
    *module = nullptr;
    return built.result;
  }
  *module = modules().add(make_module(std::move(built)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t module_destroy(ze_module_handle_t module) {
  if (module == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto found = modules().find(module);
  if (!found) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  // The specification requires the kernels to go first; say so rather than leave them dangling.
  if (found->live_kernels.load() != 0) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
  modules().remove(module);
  return ZE_RESULT_SUCCESS;
}

ze_result_t module_get_native_binary(ze_module_handle_t module, size_t* size, uint8_t* binary) {
  if (module == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto found = modules().find(module);
  if (!found) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const std::vector<std::uint8_t>& blob = found->native_binary;
  if (binary != nullptr) {
    // A truncated binary would only fail later, far from the mistake.
    if (*size < blob.size()) return ZE_RESULT_ERROR_INVALID_SIZE;
    std::memcpy(binary, blob.data(), blob.size());
  }
  *size = blob.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t module_get_kernel_names(ze_module_handle_t module, uint32_t* count, const char** names) {
  if (module == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto found = modules().find(module);
  if (!found) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const auto total = static_cast<uint32_t>(found->kernel_name_pointers.size());
  if (*count == 0 || names == nullptr) {
    *count = total;
    return ZE_RESULT_SUCCESS;
  }
  *count = std::min(*count, total);
  std::copy_n(found->kernel_name_pointers.begin(), *count, names);
  return ZE_RESULT_SUCCESS;
}

ze_result_t module_get_properties(ze_module_handle_t module, ze_module_properties_t* properties) {
  if (module == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!modules().find(module)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  properties->flags = 0;  // no imports: modules here are always fully linked
  return ZE_RESULT_SUCCESS;
}

}  // namespace jitcache::test_ze
