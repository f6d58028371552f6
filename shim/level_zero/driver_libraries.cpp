#include "shim/level_zero/driver_libraries.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <filesystem>

#include "hashing/compiler_identity.hpp"

namespace jitcache::level_zero {
namespace {

constexpr const char* kDriverGetter = "zeGetModuleProcAddrTable";

std::vector<std::string> loaded_object_paths() {
  std::vector<std::string> paths;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        auto* paths = static_cast<std::vector<std::string>*>(out);
        if (info->dlpi_name && *info->dlpi_name) paths->push_back(info->dlpi_name);
        return 0;
      },
      &paths);
  return paths;
}

// The resolved path when `path` itself defines the getter (dlsym on a handle also searches the
// object's dependencies), else empty. Probed after dl_iterate_phdr returns: dlopen must not run
// under its lock.
std::string driver_getter_owner(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return {};
  std::string owner = library_containing(::dlsym(handle, kDriverGetter));
  ::dlclose(handle);
  std::error_code ec;
  return !owner.empty() && owner == std::filesystem::canonical(path, ec).string() ? owner : std::string();
}

}  // namespace

std::vector<std::string> loaded_driver_libraries(const NextFunctions& loader_functions) {
  const std::string loader = library_containing(reinterpret_cast<const void*>(loader_functions.zeModuleCreate));
  std::vector<std::string> drivers;
  for (const std::string& path : loaded_object_paths()) {
    std::string driver = driver_getter_owner(path);
    if (!driver.empty() && driver != loader) drivers.push_back(driver);
  }
  std::sort(drivers.begin(), drivers.end());
  return drivers;
}

}  // namespace jitcache::level_zero
