// The one rule for every file jitcache runs, loads or believes that lives outside a cache root:
// the capture helper binary, libjitcache-tiers.so, trusted pack keys, packs (docs/reliability.md,
// "Trust model"). Files inside a root (entries, jitcache.conf) get the same rule through the
// root's held fd (root_check.hpp, file_ops.hpp).
//
// Accepted: an absolute path (a relative one would depend on the app's working directory), whose
// resolved file is a regular file owned by this user or root and writable by nobody else, every
// folder on the way (as given and as resolved) likewise. A sticky folder others can write (/tmp)
// counts as not writable by them: nobody else can rename or remove an entry this user or root
// owns there, so a build tree under /tmp whose own folders are ours is as safe as one in $HOME.
// A folder on the way that another user owns (a planted /tmp/bin) is what is refused.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "store/files/file_ops.hpp"

namespace jitcache {

// The resolved path to use from then on (the caller resolves once, at start), or nullopt with
// `why` naming the path and what failed. When `opened` is given, the file is left open in it.
std::optional<std::filesystem::path> resolve_trusted_file(const std::filesystem::path& path,
                                                          std::string* why, fileops::File* opened = nullptr);

}  // namespace jitcache
