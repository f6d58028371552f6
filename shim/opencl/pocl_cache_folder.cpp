#include "shim/opencl/pocl_cache_folder.hpp"

#include <cstdlib>

namespace jitcache::opencl {

bool pocl_kernel_cache_off() {
  const char* value = std::getenv("POCL_KERNEL_CACHE");
  return value && value[0] != '1';
}

std::filesystem::path pocl_cache_folder() {
  if (const char* dir = std::getenv("POCL_CACHE_DIR")) return dir;
  const char* below = pocl_kernel_cache_off() ? "pocl/uncached" : "pocl/kcache";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / below;
  if (const char* home = std::getenv("HOME")) return std::filesystem::path(home) / ".cache" / below;
  return std::filesystem::path("/tmp") / below;
}

}  // namespace jitcache::opencl
