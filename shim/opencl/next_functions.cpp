#include "shim/opencl/next_functions.hpp"

#include <dlfcn.h>

#include <mutex>

namespace jitcache::opencl {
namespace {

NextFunctions g_next;
std::once_flag g_resolved;

void resolve_with_rtld_next() {
#define JITCACHE_RESOLVE(name) \
  if (!g_next.name) g_next.name = reinterpret_cast<decltype(&::name)>(::dlsym(RTLD_NEXT, #name));
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_RESOLVE)
#undef JITCACHE_RESOLVE
}

}  // namespace

const NextFunctions& next() {
  std::call_once(g_resolved, resolve_with_rtld_next);
  return g_next;
}

void set_next_functions(const NextFunctions& functions) {
  g_next = functions;
  std::call_once(g_resolved, [] {});  // a layer's table wins over RTLD_NEXT
}

}  // namespace jitcache::opencl
