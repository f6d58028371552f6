#include <windows.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/platform.hpp"

namespace jitcache::platform {
namespace {

// A variable read as UTF-16, so that non-ASCII user names survive.
std::wstring env_wide(const wchar_t* name) {
  wchar_t buffer[32768];
  const DWORD length = GetEnvironmentVariableW(name, buffer, static_cast<DWORD>(std::size(buffer)));
  if (length == 0 || length >= std::size(buffer)) return {};
  return std::wstring(buffer, length);
}

}  // namespace

std::filesystem::path default_cache_root() {
  for (const wchar_t* name : {L"LOCALAPPDATA", L"TEMP", L"TMP"}) {
    if (std::wstring value = env_wide(name); !value.empty()) return std::filesystem::path(value) / L"jitcache";
  }
  return std::filesystem::path(L"C:\\jitcache");
}

// No capture helpers here: nobody asks.
std::optional<std::chrono::microseconds> process_cpu_time(long) { return std::nullopt; }

std::chrono::microseconds own_cpu_time() {
  FILETIME created, ended, kernel, user;
  if (!GetProcessTimes(GetCurrentProcess(), &created, &ended, &kernel, &user)) return std::chrono::microseconds(0);
  auto ticks = [](const FILETIME& t) { return (std::uint64_t{t.dwHighDateTime} << 32) | t.dwLowDateTime; };
  return std::chrono::microseconds((ticks(kernel) + ticks(user)) / 10);  // 100 ns ticks
}

std::string executable_path() {
  wchar_t buffer[32768];
  const DWORD length = GetModuleFileNameW(nullptr, buffer, static_cast<DWORD>(std::size(buffer)));
  if (length == 0 || length >= std::size(buffer)) return {};
  const std::u8string utf8 = std::filesystem::path(std::wstring(buffer, length)).u8string();
  return std::string(utf8.begin(), utf8.end());
}

void set_environment(const std::string& name, const std::string& value) {
  const auto wide = [](const std::string& text) { return std::filesystem::path(std::u8string(text.begin(), text.end())).wstring(); };
  SetEnvironmentVariableW(wide(name).c_str(), wide(value).c_str());  // what CreateProcessW hands on
  _wputenv_s(wide(name).c_str(), wide(value).c_str());                // what std::getenv reads
}

std::tm local_time(std::time_t seconds) {
  std::tm local{};
  localtime_s(&local, &seconds);
  return local;
}

void at_fork(void (*)(), void (*)(), void (*)()) {}  // no fork on Windows

bool worker_threads_outlive_exit() { return false; }

// MinGW has neither libcrypto nor hiredis (Debian): no packs, no remote tier in this build.
const TierFactory* load_tier_plugin(std::string* why) {
  *why = "not supported in this build (Windows)";
  return nullptr;
}

}  // namespace jitcache::platform
