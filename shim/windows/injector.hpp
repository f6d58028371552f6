// Starting an app with jitcache.dll injected: the one implementation behind jitcache-run.exe and
// `jitcache run` on Windows. The app is created suspended, a remote thread calls LoadLibraryW on
// the DLL inside it, and only then does its main thread run. If the DLL cannot be loaded the app
// still runs, uncached, after one warning.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace jitcache::windows {

// Exit code when the app itself cannot be started (as a shell's "command not found").
inline constexpr int kCannotStartApp = 127;

// Runs argv (argv[0] the app, searched as CreateProcessW does) with `dll` loaded into it, waits
// for it, and returns its exit code. The app inherits this process's environment, standard
// handles and current directory. Messages start with `who` ("jitcache-run", "jitcache").
int run_injected(const std::vector<std::wstring>& argv, const std::filesystem::path& dll, const char* who);

// The running executable's directory.
std::filesystem::path executable_directory();

}  // namespace jitcache::windows
