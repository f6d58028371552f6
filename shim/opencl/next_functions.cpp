#include "shim/opencl/next_functions.hpp"

#include <mutex>

namespace jitcache::opencl {
namespace {

NextFunctions g_next;
std::once_flag g_resolved;

void resolve_real_functions() {
#define JITCACHE_RESOLVE(name) \
  if (!g_next.name) g_next.name = reinterpret_cast<decltype(&::name)>(find_real_function(#name));
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_RESOLVE)
#undef JITCACHE_RESOLVE
}

}  // namespace

const NextFunctions& next() {
  std::call_once(g_resolved, resolve_real_functions);
  return g_next;
}

void set_next_functions(const NextFunctions& functions) {
  g_next = functions;
  std::call_once(g_resolved, [] {});  // a layer's table wins over the real loader
}

}  // namespace jitcache::opencl
