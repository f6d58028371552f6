// What the tool needs from the operating system, one implementation per system:
// launch_posix.cpp (LD_PRELOAD/OPENCL_LAYERS, then exec) and launch_win32.cpp (jitcache.dll
// injected by shim/windows/injector.cpp, the code of jitcache-run.exe).
#pragma once

#include <string>
#include <vector>

namespace jitcache::tool {

// The tool's arguments as UTF-8 (Windows hands main() the ANSI code page's version).
std::vector<std::string> utf8_arguments(int argc, char** argv);

// Runs argv (argv[0] the app) with the cache injected; the JITCACHE_* settings are already in this
// process's environment, which the app inherits. POSIX execs the app, so this returns only when
// that failed; Windows waits for the app and returns its exit code. `verbose` explains the choice
// of injection on stderr.
int run_with_cache(std::vector<std::string> argv, bool verbose);

// Exit codes of the tool's own failures, as env(1) and timeout(1) use them.
inline constexpr int kToolFailure = 125;
inline constexpr int kCannotExecute = 126;
inline constexpr int kNotFound = 127;

}  // namespace jitcache::tool
