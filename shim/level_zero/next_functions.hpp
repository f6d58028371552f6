// The Level Zero functions the hook forwards to, found behind libjitcache.so in the real loader
// (dlsym(RTLD_NEXT), else the loaded libze_loader however it was loaded: see
// shim/linux/loaded_library_function.hpp). libjitcache.so never links the loader, and the hook
// never calls ze* by name.
#pragma once

#include <string>

#include <ze_api.h>

namespace jitcache::level_zero {

#define JITCACHE_LEVEL_ZERO_FUNCTIONS(X) \
  X(zeDriverGet)                         \
  X(zeDriverGetProperties)               \
  X(zeDeviceGet)                         \
  X(zeDeviceGetSubDevices)               \
  X(zeDeviceGetProperties)               \
  X(zeDeviceGetModuleProperties)         \
  X(zeModuleCreate)                      \
  X(zeModuleDestroy)                     \
  X(zeModuleGetNativeBinary)             \
  X(zeModuleGetKernelNames)              \
  X(zeModuleBuildLogGetString)           \
  X(zeModuleBuildLogDestroy)             \
  X(zeContextDestroy)

struct NextFunctions {
#define JITCACHE_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  JITCACHE_LEVEL_ZERO_FUNCTIONS(JITCACHE_DECLARE_POINTER)
#undef JITCACHE_DECLARE_POINTER
};

// Resolved on use until every entry was found (a null is never cached). No entry is ever null: one
// no loaded loader exports returns ZE_RESULT_ERROR_UNINITIALIZED.
const NextFunctions& next();

// "<call> returned 0x<result>": a failed call, for warnings and traces.
std::string result_text(const char* call, ze_result_t result);

}  // namespace jitcache::level_zero
