#include "shim/level_zero/next_functions.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "shim/linux/loaded_library_function.hpp"

namespace jitcache::level_zero {
namespace {

// Stands in for an entry point no loaded loader exports, so that no hook ever calls a null
// pointer: the answer of a loader that was never initialised.
template <typename Function>
struct Unresolved;

template <typename... Args>
struct Unresolved<ze_result_t(ZE_APICALL*)(Args...)> {
  static ze_result_t ZE_APICALL fail(Args...) { return ZE_RESULT_ERROR_UNINITIALIZED; }
};

struct Resolution {
  NextFunctions functions;
  unsigned found = 0;
  bool complete = true;
};

Resolution resolve() {
  static constexpr const char* kSonames[] = {"libze_loader.so.1", "libze_loader.so", nullptr};
  static constexpr LoaderLibrary kLoader{kSonames, "libze_loader.so"};
  Resolution r;
#define JITCACHE_RESOLVE(name)                                                                        \
  r.functions.name = reinterpret_cast<decltype(&::name)>(find_loaded_library_function(#name, kLoader)); \
  if (r.functions.name) ++r.found;                                                                    \
  else r.complete = false;                                                                            \
  if (!r.functions.name) r.functions.name = &Unresolved<decltype(&::name)>::fail;
  JITCACHE_LEVEL_ZERO_FUNCTIONS(JITCACHE_RESOLVE)
#undef JITCACHE_RESOLVE
  return r;
}

// Read without a lock by the hook, never freed; resolved again while incomplete (the loader may
// be loaded later, or from a module dlopen'ed RTLD_LOCAL) and republished only when more was found.
std::atomic<const NextFunctions*> g_functions{nullptr};
std::atomic<bool> g_settled{false};

}  // namespace

const NextFunctions& next() {
  if (g_settled.load(std::memory_order_acquire)) return *g_functions.load(std::memory_order_acquire);
  static std::mutex mutex;
  static unsigned published_found = 0;
  std::lock_guard lock(mutex);
  if (!g_settled.load(std::memory_order_acquire)) {
    Resolution r = resolve();
    if (!g_functions.load(std::memory_order_relaxed) || r.found > published_found) {
      g_functions.store(new NextFunctions(r.functions), std::memory_order_release);
      published_found = r.found;
    }
    if (r.complete) g_settled.store(true, std::memory_order_release);
  }
  return *g_functions.load(std::memory_order_acquire);
}

std::string result_text(const char* call, ze_result_t result) {
  char text[96];
  std::snprintf(text, sizeof text, "%s returned 0x%x", call, static_cast<unsigned>(result));
  return text;
}

}  // namespace jitcache::level_zero
