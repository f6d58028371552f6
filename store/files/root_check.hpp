// Deciding whether a cache root can be trusted, and holding it open once it is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "store/files/file_ops.hpp"

namespace jitcache {

enum class RootCheck { missing, accepted, refused };

// Opens an existing root for reading what it holds (entries, jitcache.conf). Accepted: a real
// folder (not a symlink), owned by this user or by root, writable by nobody else, whose ancestors
// no other user can rename or replace (fileops::check_ancestors). `why` says what was refused.
RootCheck open_trusted_root(const std::filesystem::path& root, fileops::Dir* dir, std::string* why);

// A mode's permission bits as refusals show them ("0775").
std::string octal_mode(std::uint32_t mode);

}  // namespace jitcache
