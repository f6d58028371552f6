// Module lookup with GetModuleHandleExW / Toolhelp, file times with GetFileAttributesExW.
// PE files carry no GNU build-id, so a library is identified by path + size + mtime.
#include <windows.h>
#include <tlhelp32.h>

#include <algorithm>
#include <array>
#include <cwctype>
#include <filesystem>
#include <string_view>

#include "hashing/compiler_identity.hpp"
#include "hashing/compiler_identity_platform.hpp"

namespace jitcache {
namespace {

// Backends whose version decides codegen, by lower-case DLL name prefix: Intel IGC and its
// frontend, NVIDIA's PTX JIT and OpenCL compiler, AMD's code-object manager and OpenCL runtime.
constexpr std::array<std::wstring_view, 6> kCompilerLibraryPrefixes = {
    L"igc", L"igdfcl", L"nvptxjitcompiler", L"nvcompiler", L"amd_comgr", L"amdocl"};

bool is_compiler_library(std::wstring name) {
  std::transform(name.begin(), name.end(), name.begin(), [](wchar_t c) { return std::towlower(c); });
  return std::any_of(kCompilerLibraryPrefixes.begin(), kCompilerLibraryPrefixes.end(),
                     [&name](std::wstring_view prefix) { return std::wstring_view(name).substr(0, prefix.size()) == prefix; });
}

std::string utf8(const std::wstring& wide) {
  const std::u8string bytes = std::filesystem::path(wide).u8string();
  return std::string(bytes.begin(), bytes.end());
}

std::wstring wide(const std::string& utf8_text) {
  return std::filesystem::path(std::u8string(utf8_text.begin(), utf8_text.end())).wstring();
}

std::string module_path(HMODULE module) {
  wchar_t buffer[32768];
  const DWORD length = GetModuleFileNameW(module, buffer, static_cast<DWORD>(std::size(buffer)));
  if (length == 0 || length >= std::size(buffer)) return {};
  return utf8(std::wstring(buffer, length));
}

}  // namespace

bool read_size_and_mtime(LibraryIdentity& identity) {
  WIN32_FILE_ATTRIBUTE_DATA data{};
  if (!GetFileAttributesExW(wide(identity.path).c_str(), GetFileExInfoStandard, &data)) return false;
  identity.size = (static_cast<std::uint64_t>(data.nFileSizeHigh) << 32) | data.nFileSizeLow;
  const std::uint64_t ticks =  // 100 ns since 1601-01-01
      (static_cast<std::uint64_t>(data.ftLastWriteTime.dwHighDateTime) << 32) | data.ftLastWriteTime.dwLowDateTime;
  constexpr std::uint64_t kTicksFrom1601To1970 = 116444736000000000ull;
  identity.mtime_ns = static_cast<std::int64_t>(ticks - kTicksFrom1601To1970) * 100;
  return true;
}

std::string library_containing(const void* address) {
  HMODULE module = nullptr;
  const DWORD flags = GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT;
  if (address == nullptr || !GetModuleHandleExW(flags, static_cast<LPCWSTR>(address), &module)) return {};
  return module_path(module);
}

std::vector<std::string> loaded_compiler_libraries() {
  std::vector<std::string> paths;
  HANDLE snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, GetCurrentProcessId());
  if (snapshot == INVALID_HANDLE_VALUE) return paths;
  MODULEENTRY32W entry{};
  entry.dwSize = sizeof entry;
  for (BOOL more = Module32FirstW(snapshot, &entry); more; more = Module32NextW(snapshot, &entry)) {
    if (is_compiler_library(entry.szModule)) paths.push_back(utf8(entry.szExePath));
  }
  CloseHandle(snapshot);
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

// Windows: no import-table closure yet; every loaded compiler library, as before (safe: more
// libraries in the key only means more misses).
std::vector<std::string> compiler_libraries_of(const std::vector<std::string>&) { return loaded_compiler_libraries(); }

}  // namespace jitcache
