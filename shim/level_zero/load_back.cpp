#include "shim/level_zero/load_back.hpp"

#include <cstdio>

#include "core/clock.hpp"
#include "capture/load_back_check.hpp"
#include "shim/level_zero/next_functions.hpp"

namespace jitcache::level_zero {
namespace {

std::string check(ze_context_handle_t context, ze_device_handle_t device, const std::string& binary,
                  const char* build_flags, const std::vector<std::string>& expected) {
  ze_module_desc_t native = {ZE_STRUCTURE_TYPE_MODULE_DESC,
                             nullptr,
                             ZE_MODULE_FORMAT_NATIVE,
                             binary.size(),
                             reinterpret_cast<const std::uint8_t*>(binary.data()),
                             build_flags,
                             nullptr};
  // A module of its own in the replay's context: Level Zero modules share nothing with each other.
  ze_module_handle_t module = nullptr;
  const ze_result_t result = next().zeModuleCreate(context, device, &native, &module, nullptr);
  if (result != ZE_RESULT_SUCCESS) {
    char text[96];
    std::snprintf(text, sizeof text, "zeModuleCreate(ZE_MODULE_FORMAT_NATIVE) returned 0x%x",
                  static_cast<unsigned>(result));
    if (module) next().zeModuleDestroy(module);
    return text;
  }
  std::string why = kernel_names_mismatch(kernel_names(module), expected);
  next().zeModuleDestroy(module);
  return why;
}

}  // namespace

std::string load_back(ze_context_handle_t context, ze_device_handle_t device, const std::string& binary,
                      const char* build_flags, const std::vector<std::string>& kernel_names, std::uint64_t* elapsed_us) {
  Stopwatch watch;
  std::string why = check(context, device, binary, build_flags, kernel_names);
  *elapsed_us = watch.elapsed_us();
  return why;
}

std::vector<std::string> kernel_names(ze_module_handle_t module) {
  std::uint32_t count = 0;
  if (next().zeModuleGetKernelNames(module, &count, nullptr) != ZE_RESULT_SUCCESS) return {};
  std::vector<const char*> names(count);
  if (next().zeModuleGetKernelNames(module, &count, names.data()) != ZE_RESULT_SUCCESS) return {};
  return {names.begin(), names.begin() + count};
}

}  // namespace jitcache::level_zero
