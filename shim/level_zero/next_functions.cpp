#include "shim/level_zero/next_functions.hpp"

#include <dlfcn.h>

namespace jitcache::level_zero {

const NextFunctions& next() {
  static const NextFunctions functions = [] {
    NextFunctions found;
#define JITCACHE_RESOLVE(name) found.name = reinterpret_cast<decltype(&::name)>(::dlsym(RTLD_NEXT, #name));
    JITCACHE_LEVEL_ZERO_FUNCTIONS(JITCACHE_RESOLVE)
#undef JITCACHE_RESOLVE
    return found;
  }();
  return functions;
}

}  // namespace jitcache::level_zero
