// The real loader behind the preloaded library: the next definition in the lookup order.
#include <dlfcn.h>

#include "shim/opencl/next_functions.hpp"

namespace jitcache::opencl {

void* find_real_function(const char* name) { return ::dlsym(RTLD_NEXT, name); }

}  // namespace jitcache::opencl
