#include "shim/linux/injection_choice.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <fstream>
#include <iterator>

namespace jitcache {
namespace {

constexpr std::string_view kLayersVariable = "OPENCL_LAYERS";

bool file_contains(const std::filesystem::path& file, std::string_view needle) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return std::search(contents.begin(), contents.end(), needle.begin(), needle.end()) != contents.end();
}

// Both loaders and ld.so split these lists on ':'.
std::string prepend(const std::string& entry, const char* existing) {
  if (!existing || !*existing) return entry;
  return entry + ":" + existing;
}

}  // namespace

std::optional<std::filesystem::path> find_opencl_loader() {
  // Loading the ICD loader runs no driver code: both loaders enumerate ICDs on the first call.
  void* handle = ::dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!handle) return std::nullopt;
  std::optional<std::filesystem::path> path;
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    std::error_code ec;
    path = std::filesystem::canonical(map->l_name, ec);
    if (ec) path = map->l_name;
  }
  ::dlclose(handle);
  return path;
}

bool loader_supports_layers(const std::filesystem::path& loader) { return file_contains(loader, kLayersVariable); }

InjectionPlan plan_injection(const std::filesystem::path& library, const std::optional<std::filesystem::path>& loader,
                             const char* existing_layers, const char* existing_preload) {
  InjectionPlan plan;
  if (loader && loader_supports_layers(*loader)) {
    plan.method = Injection::icd_layer;
    plan.variable = kLayersVariable;
    plan.value = prepend(library.string(), existing_layers);
    plan.reason = "ICD loader " + loader->string() + " supports layers: OPENCL_LAYERS also covers dlopen'ed loaders";
    return plan;
  }
  plan.method = Injection::preload;
  plan.variable = "LD_PRELOAD";
  plan.value = prepend(library.string(), existing_preload);
  plan.reason = loader ? "ICD loader " + loader->string() + " has no layer support: using LD_PRELOAD"
                       : "no ICD loader found (libOpenCL.so.1): using LD_PRELOAD";
  return plan;
}

}  // namespace jitcache
