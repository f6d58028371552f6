// Whether a shared object may be handed to dlopen: libjitcache-tiers.so, which the shim loads into
// every process that sets JITCACHE_PACKS or JITCACHE_REMOTE. dlopen runs a file's code and maps
// its segments: a file another user may write runs as this user, and a truncated one (a build or
// copy cut short) faults with SIGBUS when the loader touches a segment past its end, killing the
// app. `jitcache doctor` gives the same verdict from the same check.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace jitcache {

// The path to dlopen (resolved once), or nullopt with `why`: the trust rule for code
// (store/files/trusted_file.hpp), then an ELF shared object of this machine's class and byte order
// whose program headers, and the file ranges of every segment they name, lie within the file.
std::optional<std::filesystem::path> check_loadable_library(const std::filesystem::path& path, std::string* why);

}  // namespace jitcache
