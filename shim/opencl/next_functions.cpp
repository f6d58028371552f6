#include "shim/opencl/next_functions.hpp"

#include <atomic>
#include <cstring>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "core/log.hpp"

namespace jitcache::opencl {
namespace {

// What ICD loaders answer for an object they cannot dispatch: the "invalid <first argument>" code.
template <typename Object>
constexpr cl_int invalid_object_error() {
  // clCreateContext*: their first argument is the properties (naming the platform).
  if constexpr (std::is_same_v<Object, cl_platform_id> || std::is_same_v<Object, const cl_context_properties*>) {
    return CL_INVALID_PLATFORM;
  }
  else if constexpr (std::is_same_v<Object, cl_device_id>) return CL_INVALID_DEVICE;
  else if constexpr (std::is_same_v<Object, cl_context>) return CL_INVALID_CONTEXT;
  else if constexpr (std::is_same_v<Object, cl_program>) return CL_INVALID_PROGRAM;
  else if constexpr (std::is_same_v<Object, cl_kernel>) return CL_INVALID_KERNEL;
  else static_assert(!sizeof(Object), "add the object's error code");
}

// Stands in for an entry point no loaded loader exports, so that no hook ever calls a null
// pointer: it fails the way a loader fails for an object it cannot dispatch, or, for an entry
// point of a newer OpenCL than the loader's, as a platform without that feature does.
template <typename Function>
struct Unresolved;

template <typename Result, typename Object, typename... Rest>
struct Unresolved<Result(CL_API_CALL*)(Object, Rest...)> {
  static constexpr cl_int kInvalidObject = invalid_object_error<Object>();

  template <cl_int error>
  static Result CL_API_CALL fail(Object, Rest... rest) {
    if constexpr (std::is_same_v<Result, cl_int>) {
      ((void)rest, ...);
      return error;
    } else {
      // Every object-returning entry point ends with cl_int* errcode_ret.
      auto* errcode_ret = std::get<sizeof...(Rest) - 1>(std::forward_as_tuple(rest...));
      static_assert(std::is_same_v<decltype(errcode_ret), cl_int*>);
      if (errcode_ret) *errcode_ret = error;
      return nullptr;
    }
  }
};

// Entry points of OpenCL 2.1/2.2 that an older loader lacks; everything else, a loader has.
bool optional_entry(const char* name) {
  return std::strcmp(name, "clCreateProgramWithIL") == 0 || std::strcmp(name, "clSetProgramSpecializationConstant") == 0 ||
         std::strcmp(name, "clCloneKernel") == 0;
}

struct Resolution {
  NextFunctions functions;
  unsigned found = 0;
  bool required_found = true;
  std::string missing;
};

Resolution resolve_real_functions() {
  Resolution r;
#define JITCACHE_RESOLVE(name)                                                                 \
  r.functions.name = reinterpret_cast<decltype(&::name)>(find_real_function(#name));          \
  if (r.functions.name) {                                                                      \
    ++r.found;                                                                                 \
  } else if (!optional_entry(#name)) {                                                         \
    r.required_found = false;                                                                  \
    r.missing += r.missing.empty() ? #name : ", " #name;                                       \
  }
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_RESOLVE)
#undef JITCACHE_RESOLVE
  return r;
}

void fill_unresolved(NextFunctions& functions) {
#define JITCACHE_FILL(name)                                                                  \
  if (!functions.name) {                                                                     \
    using Stub = Unresolved<decltype(&::name)>;                                              \
    functions.name = optional_entry(#name) ? &Stub::template fail<CL_INVALID_OPERATION>      \
                                           : &Stub::template fail<Stub::kInvalidObject>;      \
  }
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_FILL)
#undef JITCACHE_FILL
}

// Published tables are read without a lock by every hook and never freed (hooks run during exit).
// The loader's table is resolved again while a required entry is missing (the app may load the
// loader later) and republished only when more was found: at most once per entry.
std::atomic<const NextFunctions*> g_layer_target{nullptr};
std::atomic<const NextFunctions*> g_loader{nullptr};
std::atomic<bool> g_loader_settled{false};

}  // namespace

const NextFunctions& loader_functions() {
  if (g_loader_settled.load(std::memory_order_acquire)) return *g_loader.load(std::memory_order_acquire);
  static std::mutex mutex;
  static unsigned published_found = 0;
  std::lock_guard lock(mutex);
  if (!g_loader_settled.load(std::memory_order_acquire)) {
    Resolution r = resolve_real_functions();
    const bool first = !g_loader.load(std::memory_order_relaxed);
    if (first || r.found > published_found) {
      fill_unresolved(r.functions);
      g_loader.store(new NextFunctions(r.functions), std::memory_order_release);
      published_found = r.found;
    }
    if (r.required_found) {
      g_loader_settled.store(true, std::memory_order_release);
    } else if (first) {
      log_warning("OpenCL loader functions not found (" + r.missing + "): those calls fail with the loader's "
                  "invalid-object error until a loader is loaded");
    }
  }
  return *g_loader.load(std::memory_order_acquire);
}

const NextFunctions& next() {
  if (const NextFunctions* target = g_layer_target.load(std::memory_order_acquire)) return *target;
  return loader_functions();
}

void set_layer_target(const NextFunctions& functions) {
  auto* target = new NextFunctions(functions);
  fill_unresolved(*target);
  g_layer_target.store(target, std::memory_order_release);
}

}  // namespace jitcache::opencl
