// The real loader behind the preloaded library: the next definition in the lookup order, or the
// loaded ICD loader itself when the app's OpenCL-linked module was dlopen'ed with RTLD_LOCAL.
#include "shim/linux/loaded_library_function.hpp"
#include "shim/opencl/next_functions.hpp"

namespace jitcache::opencl {

void* find_real_function(const char* name) {
  static constexpr const char* kSonames[] = {"libOpenCL.so.1", "libOpenCL.so", nullptr};
  static constexpr LoaderLibrary kOpenClLoader{kSonames, "libOpenCL.so"};
  return find_loaded_library_function(name, kOpenClLoader);
}

}  // namespace jitcache::opencl
