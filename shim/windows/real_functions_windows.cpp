// The real loader on Windows: OpenCL.dll's own exports. jitcache.dll never patches its own
// import table, so GetProcAddress here is the system's.
#include <windows.h>

#include "shim/opencl/next_functions.hpp"

namespace jitcache::opencl {

void* find_real_function(const char* name) {
  HMODULE loader = GetModuleHandleW(L"OpenCL.dll");
  if (loader == nullptr) loader = LoadLibraryW(L"OpenCL.dll");
  if (loader == nullptr) return nullptr;
  return reinterpret_cast<void*>(GetProcAddress(loader, name));
}

}  // namespace jitcache::opencl
