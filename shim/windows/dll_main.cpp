// jitcache.dll: loaded into an app by jitcache-run.exe (or any injector). On load it points the
// OpenCL imports of every loaded module at the shared hooks; loader hooks cover what comes later.
#include <windows.h>

#include "shim/windows/loader_hooks.hpp"

extern "C" BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID) {
  if (reason == DLL_PROCESS_ATTACH) {
    DisableThreadLibraryCalls(instance);
    jitcache::windows::patch_loaded_modules();
  }
  return TRUE;
}
