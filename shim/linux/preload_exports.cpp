// LD_PRELOAD entry points: the app's calls to these OpenCL functions land here first and go to
// the shared hooks; everything else the app calls reaches the real loader untouched. When an ICD
// layer copy of jitcache is active, the layer owns the hooks and these only forward to the loader
// (which calls the layer), so no build is hooked twice.
#include "core/engine.hpp"
#include "shim/opencl/hook_owner.hpp"
#include "shim/opencl/hooked_functions.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"

#define JITCACHE_EXPORT extern "C" __attribute__((visibility("default")))

namespace cl = jitcache::opencl;

// A layer is only ever initialised by a loader, so the loader's export exists when it owns the hooks.
#define JITCACHE_DEFINE_EXPORT(result, api_name, hook, parameters, arguments)             \
  JITCACHE_EXPORT result api_name parameters {                                              \
    if (cl::layer_owns_hooks()) return cl::loader_functions().api_name arguments;           \
    return cl::hook arguments;                                                              \
  }
JITCACHE_HOOKED_OPENCL_FUNCTIONS(JITCACHE_DEFINE_EXPORT)
#undef JITCACHE_DEFINE_EXPORT

// Not hooked, only watched: an app's first OpenCL call, made before the loader loads its drivers
// (most of a short run). Capture helpers learn at the app's start that it is at work
// (preload_announce.cpp); a program that does not start through glibc's start tells them here.
JITCACHE_EXPORT cl_int clGetPlatformIDs(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  jitcache::Engine::announce_app_early();
  using GetPlatformIds = cl_int (*)(cl_uint, cl_platform_id*, cl_uint*);
  static const auto real = reinterpret_cast<GetPlatformIds>(cl::find_real_function("clGetPlatformIDs"));
  return real ? real(num_entries, platforms, num_platforms) : CL_PLATFORM_NOT_FOUND_KHR;  // as a loader with no driver
}

// How a layer that is another copy of libjitcache.so tells this preloaded copy to stand down.
JITCACHE_EXPORT void jitcache_opencl_layer_active() { cl::note_layer_active(); }
