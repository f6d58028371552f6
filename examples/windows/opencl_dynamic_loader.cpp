#include <windows.h>

#include <cstdio>
#include <cstdlib>

#include "dynamic_opencl_functions.hpp"

namespace {

HMODULE load_opencl() {
  HMODULE opencl = LoadLibraryW(L"OpenCL.dll");
  if (opencl == nullptr) {
    std::fprintf(stderr, "opencl_example: cannot load OpenCL.dll (error %lu)\n", GetLastError());
    std::exit(1);
  }
  return opencl;
}

const HMODULE g_opencl = load_opencl();

}  // namespace

#define JITCACHE_RESOLVE_DYNAMIC(name) \
  decltype(&::name) dynamic_##name =   \
      reinterpret_cast<decltype(&::name)>(reinterpret_cast<void*>(GetProcAddress(g_opencl, #name)));
JITCACHE_EXAMPLE_OPENCL_FUNCTIONS(JITCACHE_RESOLVE_DYNAMIC)
#undef JITCACHE_RESOLVE_DYNAMIC
