#include "shim/opencl/hook_owner.hpp"

#include <dlfcn.h>

#include <atomic>

namespace jitcache::opencl {
namespace {

std::atomic<bool> g_layer_owns_hooks{false};

// The object file a code address belongs to.
const void* object_of(const void* address) {
  Dl_info info{};
  return ::dladdr(address, &info) ? info.dli_fbase : nullptr;
}

}  // namespace

void note_layer_active() { g_layer_owns_hooks.store(true, std::memory_order_release); }

bool layer_owns_hooks() { return g_layer_owns_hooks.load(std::memory_order_acquire); }

void claim_hooks_for_layer() {
  note_layer_active();
  // A different copy of libjitcache.so preloaded into the global scope: tell it too. (The loader
  // dlopens layers RTLD_LOCAL, so only the preloaded copy is visible here.)
  void* other = ::dlsym(RTLD_DEFAULT, "jitcache_opencl_layer_active");
  if (other && object_of(other) != object_of(reinterpret_cast<const void*>(&note_layer_active))) {
    reinterpret_cast<void (*)()>(other)();
  }
}

}  // namespace jitcache::opencl
