// How `jitcache run` injects libjitcache.so into an app: as an OpenCL ICD layer when the app's
// ICD loader supports layers, else with LD_PRELOAD. The layer is preferred because the loader
// calls it for every OpenCL call, including calls through pointers from dlopen/dlsym or
// clGetExtensionFunctionAddress, which symbol interposition never sees. See
// docs/opencl-coverage.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace jitcache {

enum class Injection { icd_layer, preload };

struct InjectionPlan {
  Injection method = Injection::preload;
  std::string variable;  // OPENCL_LAYERS or LD_PRELOAD
  std::string value;     // the variable's new value (existing entries kept)
  std::string reason;    // one line for `jitcache run --verbose`
};

// The file that "libOpenCL.so.1" resolves to for this process's search path, if any.
std::optional<std::filesystem::path> find_opencl_loader();

// Loaders that implement cl_loader_layers read OPENCL_LAYERS (ocl-icd >= 2.3, Khronos loader
// >= 2020.06); older ones do not contain the name at all.
bool loader_supports_layers(const std::filesystem::path& loader);

// `existing` is the variable's current value in the app's environment (nullptr: unset).
InjectionPlan plan_injection(const std::filesystem::path& library, const std::optional<std::filesystem::path>& loader,
                             const char* existing_layers, const char* existing_preload);

}  // namespace jitcache
