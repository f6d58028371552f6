#include "shim/opencl/next_functions.hpp"

#include <atomic>

namespace jitcache::opencl {
namespace {

NextFunctions resolve_real_functions() {
  NextFunctions functions;
#define JITCACHE_RESOLVE(name) functions.name = reinterpret_cast<decltype(&::name)>(find_real_function(#name));
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_RESOLVE)
#undef JITCACHE_RESOLVE
  return functions;
}

// Published once, read without a lock by every hook; never freed (hooks run during exit).
std::atomic<const NextFunctions*> g_layer_target{nullptr};

}  // namespace

const NextFunctions& loader_functions() {
  static const NextFunctions* functions = new NextFunctions(resolve_real_functions());
  return *functions;
}

const NextFunctions& next() {
  if (const NextFunctions* target = g_layer_target.load(std::memory_order_acquire)) return *target;
  return loader_functions();
}

void set_layer_target(const NextFunctions& functions) {
  g_layer_target.store(new NextFunctions(functions), std::memory_order_release);
}

}  // namespace jitcache::opencl
