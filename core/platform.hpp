// The few things core needs that differ between operating systems. platform_posix.cpp and
// platform_win32.cpp implement them; nothing else in core/ calls the OS directly.
#pragma once

#include <chrono>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

namespace jitcache {
struct TierFactory;
}

namespace jitcache::platform {

// The cache root when neither JITCACHE_DIR nor a config names one:
// POSIX $XDG_CACHE_HOME/jitcache, else ~/.cache/jitcache; Windows %LOCALAPPDATA%\jitcache.
std::filesystem::path default_cache_root();

// The running program's path (UTF-8), or empty.
std::string executable_path();

// The CPU time (user + system, all its threads and its reaped children) a process of this machine
// has used so far, where the OS tells (Linux: /proc/<pid>/stat, in clock ticks). Nothing where it
// does not (no such process, Windows).
std::optional<std::chrono::microseconds> process_cpu_time(long pid);

// This process's CPU time so far (user + system): all its threads' and its reaped children's (a
// driver's compiler may run a linker), as wait4 reports it to its parent (POSIX: getrusage in
// microseconds; Windows: its own threads').
std::chrono::microseconds own_cpu_time();

// Sets an environment variable (UTF-8) of this process, seen by std::getenv and inherited by the
// programs it starts. Windows keeps two copies (the C runtime's and the process's): both change.
void set_environment(const std::string& name, const std::string& value);

// The local time of `seconds` since the epoch (localtime_r on POSIX, localtime_s on Windows).
std::tm local_time(std::time_t seconds);

// Runs `prepare` before fork() and `parent`/`child` after it in each process. No-op without fork.
void at_fork(void (*prepare)(), void (*parent)(), void (*child)());

// False where the OS stops worker threads before the library's exit handlers run (Windows:
// ExitProcess ends every other thread, then calls DllMain). Without that guarantee a queued
// store could be lost at exit or a half-finished one could deadlock the flush, so the
// background writer runs jobs on the caller's thread instead.
bool worker_threads_outlive_exit();

// The factory of the pack and remote tiers (store/tiers/tiers.hpp) in libjitcache-tiers.so, loaded
// (RTLD_LOCAL, never unloaded) from the folder the library holding this code was loaded from (the
// shim's). Null and `why` when it is missing, cannot be loaded or is not this build's. Windows: none.
const TierFactory* load_tier_plugin(std::string* why);

}  // namespace jitcache::platform
