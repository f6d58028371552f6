// jitcache-run.exe app.exe [args...]: runs the app with jitcache.dll injected (injector.cpp, the
// code `jitcache run` uses too) and returns its exit code.
//
// The DLL is JITCACHE_DLL if set, else jitcache.dll next to this executable.
#include <windows.h>

#include <cstdio>
#include <string>
#include <vector>

#include "shim/windows/injector.hpp"

namespace {

std::filesystem::path dll_path() {
  wchar_t buffer[32768];
  DWORD length = GetEnvironmentVariableW(L"JITCACHE_DLL", buffer, 32768);
  if (length > 0 && length < 32768) return std::wstring(buffer, length);
  return jitcache::windows::executable_directory() / L"jitcache.dll";
}

}  // namespace

int wmain(int argc, wchar_t** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: jitcache-run app.exe [args...]\n");
    return 2;
  }
  return jitcache::windows::run_injected(std::vector<std::wstring>(argv + 1, argv + argc), dll_path(), "jitcache-run");
}
