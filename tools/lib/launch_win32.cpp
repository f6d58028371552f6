// `jitcache run` on Windows: the app is started suspended with jitcache.dll loaded into it, by the
// injector jitcache-run.exe uses (shim/windows/injector.cpp). There is no exec on Windows: the
// tool waits for the app and returns its exit code.
#include <windows.h>
#include <shellapi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "shim/windows/injector.hpp"
#include "tools/lib/launch.hpp"

namespace jitcache::tool {
namespace {

namespace fs = std::filesystem;

fs::path from_utf8(const std::string& text) { return fs::path(std::u8string(text.begin(), text.end())); }

std::string to_utf8(const fs::path& path) {
  const std::u8string text = path.u8string();
  return std::string(text.begin(), text.end());
}

// JITCACHE_DLL (as for jitcache-run.exe), else jitcache.dll next to the tool (installed, or copied
// there), else the build tree's shim/windows/jitcache.dll (the tool is tools/jitcache.exe).
bool find_dll(fs::path& found, std::string& error) {
  std::error_code ec;
  if (const wchar_t* chosen = _wgetenv(L"JITCACHE_DLL"); chosen && *chosen) {
    found = chosen;
    if (fs::is_regular_file(found, ec)) return true;
    error = "JITCACHE_DLL=" + to_utf8(found) + " is not a file";
    return false;
  }
  const fs::path tool_dir = windows::executable_directory();
  std::string tried;
  for (const fs::path& candidate : {tool_dir / L"jitcache.dll", tool_dir / L".." / L"shim" / L"windows" / L"jitcache.dll"}) {
    if (fs::is_regular_file(candidate, ec)) {
      found = candidate.lexically_normal();
      return true;
    }
    tried += "\n  " + to_utf8(candidate.lexically_normal());
  }
  error = "cannot find jitcache.dll; looked in:" + tried + "\n(set JITCACHE_DLL to its path)";
  return false;
}

}  // namespace

std::vector<std::string> utf8_arguments(int argc, char** argv) {
  int count = 0;
  wchar_t** wide = CommandLineToArgvW(GetCommandLineW(), &count);
  if (wide == nullptr || count != argc) {  // cannot happen for a console program; keep what we have
    if (wide) LocalFree(wide);
    return {argv, argv + argc};
  }
  std::vector<std::string> arguments;
  for (int i = 0; i < count; ++i) arguments.push_back(to_utf8(fs::path(wide[i])));
  LocalFree(wide);
  return arguments;
}

int run_with_cache(std::vector<std::string> argv, bool verbose) {
  fs::path dll;
  std::string error;
  if (!find_dll(dll, error)) {
    std::fprintf(stderr, "jitcache: error: run: %s\n", error.c_str());
    return kToolFailure;
  }
  if (verbose) {
    std::fprintf(stderr, "jitcache: injecting %s with CreateRemoteThread(LoadLibraryW) into the suspended app\n",
                 to_utf8(dll).c_str());
  }
  std::vector<std::wstring> wide;
  for (const std::string& argument : argv) wide.push_back(from_utf8(argument).wstring());
  return windows::run_injected(wide, dll, "jitcache");
}

}  // namespace jitcache::tool
