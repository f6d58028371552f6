#include "shim/windows/loader_hooks.hpp"

#include <windows.h>
#include <psapi.h>

#include <algorithm>
#include <array>
#include <string>
#include <mutex>
#include <vector>

#include "shim/windows/import_patcher.hpp"
#include "shim/windows/opencl_hook_table.hpp"

namespace jitcache::windows {
namespace {

HMODULE this_module() {
  HMODULE module = nullptr;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                     reinterpret_cast<LPCWSTR>(&patch_loaded_modules), &module);
  return module;
}

// After any successful load, patch again: the new library (or one it pulled in) may import
// OpenCL.dll or load it itself.
HMODULE after_load(HMODULE loaded) {
  if (loaded != nullptr) patch_loaded_modules();
  return loaded;
}

HMODULE WINAPI load_library_a(LPCSTR name) { return after_load(LoadLibraryA(name)); }
HMODULE WINAPI load_library_w(LPCWSTR name) { return after_load(LoadLibraryW(name)); }
HMODULE WINAPI load_library_ex_a(LPCSTR name, HANDLE file, DWORD flags) {
  return after_load(LoadLibraryExA(name, file, flags));
}
HMODULE WINAPI load_library_ex_w(LPCWSTR name, HANDLE file, DWORD flags) {
  return after_load(LoadLibraryExW(name, file, flags));
}

// An app that resolves OpenCL by hand gets the hook for what jitcache hooks, the real export
// for everything else. Ordinals (a high word of zero) pass through.
FARPROC WINAPI get_proc_address(HMODULE module, LPCSTR name) {
  FARPROC real = GetProcAddress(module, name);
  const bool by_name = (reinterpret_cast<ULONG_PTR>(name) >> 16) != 0;
  if (real == nullptr || !by_name || module != GetModuleHandleW(L"OpenCL.dll")) return real;
  void* hook = opencl_hook_for(name);
  return hook ? reinterpret_cast<FARPROC>(hook) : real;
}

const std::array<Replacement, 5> kLoaderHooks = {{
    {"LoadLibraryA", reinterpret_cast<void*>(&load_library_a)},
    {"LoadLibraryW", reinterpret_cast<void*>(&load_library_w)},
    {"LoadLibraryExA", reinterpret_cast<void*>(&load_library_ex_a)},
    {"LoadLibraryExW", reinterpret_cast<void*>(&load_library_ex_w)},
    {"GetProcAddress", reinterpret_cast<void*>(&get_proc_address)},
}};

// Where apps import the loader functions from: kernel32, and on newer Windows the API sets.
constexpr std::array<const char*, 4> kLoaderDlls = {"kernel32.dll", "kernelbase.dll",
                                                    "api-ms-win-core-libraryloader-l1-2-0.dll",
                                                    "api-ms-win-core-libraryloader-l1-1-0.dll"};

std::vector<HMODULE> loaded_modules() {
  std::vector<HMODULE> modules(256);
  for (;;) {
    DWORD needed = 0;
    const DWORD capacity = static_cast<DWORD>(modules.size() * sizeof(HMODULE));
    if (!EnumProcessModules(GetCurrentProcess(), modules.data(), capacity, &needed)) return {};
    if (needed <= capacity) {
      modules.resize(needed / sizeof(HMODULE));
      return modules;
    }
    modules.resize(needed / sizeof(HMODULE) + 16);
  }
}

// Windows' own DLLs are left alone: they do not build OpenCL programs for the app, and
// rewriting their imports of the loader functions would only add risk.
bool is_system_module(HMODULE module) {
  static const std::wstring system_dir = [] {
    wchar_t buffer[MAX_PATH];
    const UINT length = GetSystemDirectoryW(buffer, MAX_PATH);
    return length > 0 && length < MAX_PATH ? std::wstring(buffer, length) + L"\\" : std::wstring();
  }();
  wchar_t path[MAX_PATH];
  const DWORD length = GetModuleFileNameW(module, path, MAX_PATH);
  if (system_dir.empty() || length == 0 || length >= MAX_PATH) return false;
  return CompareStringOrdinal(path, static_cast<int>(std::min<std::size_t>(length, system_dir.size())),
                              system_dir.c_str(), static_cast<int>(system_dir.size()), TRUE) == CSTR_EQUAL;
}

}  // namespace

void patch_loaded_modules() {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  const HMODULE self = this_module();
  const HMODULE opencl = GetModuleHandleW(L"OpenCL.dll");
  for (HMODULE module : loaded_modules()) {
    // Our own calls must reach the real functions.
    if (module == self || module == opencl || is_system_module(module)) continue;
    patch_imports(module, "OpenCL.dll", opencl_replacements());
    for (const char* dll : kLoaderDlls) patch_imports(module, dll, kLoaderHooks);
  }
}

}  // namespace jitcache::windows
