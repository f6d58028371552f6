#include "shim/windows/injector.hpp"

#include <windows.h>

#include <cstdio>

#include "shim/windows/command_line.hpp"
#include "shim/windows/start_retry.hpp"

namespace jitcache::windows {
namespace {

constexpr DWORD kInjectTimeoutMs = 60'000;

void warn(const char* who, const char* what) {
  std::fprintf(stderr, "%s: %s (error %lu); the app runs uncached\n", who, what, GetLastError());
}

// Loads the DLL into the suspended process. False (after a warning) when that failed.
bool inject(HANDLE process, const std::wstring& dll, const char* who) {
  const SIZE_T bytes = (dll.size() + 1) * sizeof(wchar_t);
  void* remote = VirtualAllocEx(process, nullptr, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
  if (remote == nullptr) return warn(who, "cannot allocate in the app"), false;
  bool loaded = false;
  if (!WriteProcessMemory(process, remote, dll.c_str(), bytes, nullptr)) {
    warn(who, "cannot write the DLL path into the app");
  } else {
    // kernel32 sits at the same address in every process of a session: our LoadLibraryW is theirs.
    auto* load_library = reinterpret_cast<LPTHREAD_START_ROUTINE>(
        reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryW")));
    HANDLE thread = CreateRemoteThread(process, nullptr, 0, load_library, remote, 0, nullptr);
    if (thread == nullptr) {
      warn(who, "cannot start the loader thread in the app");
    } else {
      DWORD module_low_bits = 0;
      if (WaitForSingleObject(thread, kInjectTimeoutMs) != WAIT_OBJECT_0) {
        warn(who, "loading jitcache.dll timed out");
      } else if (!GetExitCodeThread(thread, &module_low_bits) || module_low_bits == 0) {
        warn(who, "LoadLibraryW of jitcache.dll failed in the app");
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

int run_injected(const std::vector<std::wstring>& argv, const std::filesystem::path& dll, const char* who) {
  std::wstring command_line;
  for (const std::wstring& argument : argv) {
    if (!command_line.empty()) command_line += L' ';
    command_line += quote_argument(argument);
  }
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  PROCESS_INFORMATION app{};
  unsigned long error = ERROR_BAD_ARGUMENTS;
  auto start = [&](unsigned long* start_error) {
    // CreateProcessW may write into the command line: each attempt gets a fresh copy.
    std::wstring line = command_line;
    if (CreateProcessW(nullptr, line.data(), nullptr, nullptr, TRUE, CREATE_SUSPENDED, nullptr, nullptr,
                       &startup, &app)) {
      return true;
    }
    *start_error = GetLastError();
    return false;
  };
  if (argv.empty() || !start_with_retries(start, &error)) {
    std::fprintf(stderr, "%s: cannot start %ls (error %lu)\n", who, argv.empty() ? L"" : argv[0].c_str(), error);
    return kCannotStartApp;
  }
  // Ctrl-C reaches every process of the console, the app and us: the app decides what it means,
  // and we stay to hand back its exit code. Set after CreateProcessW, which passes the flag on.
  SetConsoleCtrlHandler(nullptr, TRUE);
  inject(app.hProcess, dll.wstring(), who);
  ResumeThread(app.hThread);
  WaitForSingleObject(app.hProcess, INFINITE);
  DWORD exit_code = 1;
  GetExitCodeProcess(app.hProcess, &exit_code);
  CloseHandle(app.hThread);
  CloseHandle(app.hProcess);
  return static_cast<int>(exit_code);
}

std::filesystem::path executable_directory() {
  wchar_t buffer[32768];
  const DWORD length = GetModuleFileNameW(nullptr, buffer, 32768);
  return std::filesystem::path(std::wstring(buffer, length < 32768 ? length : 0)).parent_path();
}

}  // namespace jitcache::windows
