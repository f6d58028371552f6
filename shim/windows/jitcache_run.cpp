// jitcache-run.exe app.exe [args...]: starts the app suspended, loads jitcache.dll into it with a
// remote thread calling LoadLibraryW, resumes it, waits, and returns its exit code. If the DLL
// cannot be loaded the app still runs, uncached, after one warning.
//
// The DLL is JITCACHE_DLL if set, else jitcache.dll next to this executable.
#include <windows.h>

#include <cstdio>
#include <string>

#include "shim/windows/command_line.hpp"

namespace {

constexpr DWORD kInjectTimeoutMs = 60'000;

std::wstring dll_path() {
  wchar_t buffer[32768];
  DWORD length = GetEnvironmentVariableW(L"JITCACHE_DLL", buffer, 32768);
  if (length > 0 && length < 32768) return std::wstring(buffer, length);
  length = GetModuleFileNameW(nullptr, buffer, 32768);
  std::wstring path(buffer, length < 32768 ? length : 0);
  return path.substr(0, path.find_last_of(L"\\/") + 1) + L"jitcache.dll";
}

void warn(const char* what) {
  std::fprintf(stderr, "jitcache-run: %s (error %lu); the app runs uncached\n", what, GetLastError());
}

// Loads the DLL into the suspended process. False (after a warning) when that failed.
bool inject(HANDLE process, const std::wstring& dll) {
  const SIZE_T bytes = (dll.size() + 1) * sizeof(wchar_t);
  void* remote = VirtualAllocEx(process, nullptr, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
  if (remote == nullptr) return warn("cannot allocate in the app"), false;
  bool loaded = false;
  if (!WriteProcessMemory(process, remote, dll.c_str(), bytes, nullptr)) {
    warn("cannot write the DLL path into the app");
  } else {
    // kernel32 sits at the same address in every process of a session: our LoadLibraryW is theirs.
    auto* load_library = reinterpret_cast<LPTHREAD_START_ROUTINE>(
        reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryW")));
    HANDLE thread = CreateRemoteThread(process, nullptr, 0, load_library, remote, 0, nullptr);
    if (thread == nullptr) {
      warn("cannot start the loader thread in the app");
    } else {
      DWORD module_low_bits = 0;
      if (WaitForSingleObject(thread, kInjectTimeoutMs) != WAIT_OBJECT_0) {
        warn("loading jitcache.dll timed out");
      } else if (!GetExitCodeThread(thread, &module_low_bits) || module_low_bits == 0) {
        warn("LoadLibraryW of jitcache.dll failed in the app");
      } else {
        loaded = true;
      }
      CloseHandle(thread);
    }
  }
  VirtualFreeEx(process, remote, 0, MEM_RELEASE);
  return loaded;
}

}  // namespace

int wmain(int argc, wchar_t** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: jitcache-run app.exe [args...]\n");
    return 2;
  }
  std::wstring command_line;
  for (int i = 1; i < argc; ++i) {
    if (i > 1) command_line += L' ';
    command_line += jitcache::windows::quote_argument(argv[i]);
  }
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  PROCESS_INFORMATION app{};
  if (!CreateProcessW(nullptr, command_line.data(), nullptr, nullptr, TRUE, CREATE_SUSPENDED, nullptr, nullptr,
                      &startup, &app)) {
    std::fprintf(stderr, "jitcache-run: cannot start %ls (error %lu)\n", argv[1], GetLastError());
    return 127;
  }
  inject(app.hProcess, dll_path());
  ResumeThread(app.hThread);
  WaitForSingleObject(app.hProcess, INFINITE);
  DWORD exit_code = 1;
  GetExitCodeProcess(app.hProcess, &exit_code);
  CloseHandle(app.hThread);
  CloseHandle(app.hProcess);
  return static_cast<int>(exit_code);
}
