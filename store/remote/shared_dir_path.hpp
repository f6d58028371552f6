// How a shared directory's path is reached (store/remote/shared_dir.hpp): from "/" one name at a time,
// openat(O_NOFOLLOW), never through a link another user owns. stat() on each prefix followed links:
// a share named through /tmp/link, a link its owner could point at his own folder, then trusted
// whatever that folder held.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "store/remote_api/remote_client.hpp"

namespace jitcache {

// A folder that could rename or replace the directory: one of the resolved path's, or one that
// holds a link the walk followed.
struct FolderAbove {
  std::string path;
  struct stat st {};
};

struct WalkedDirectory {
  int fd = -1;                     // the directory, open; the caller's to close
  std::string resolved;            // its path without links
  std::vector<FolderAbove> above;  // nearest first
};

// "a/b/c" -> {"a", "b", "c"} ("/a//b/" -> {"a", "b"}): the names of a path, empty ones skipped.
std::vector<std::string> path_steps(const std::string& path);

// Opens the directory at `path` (absolute). A symbolic link on the way is followed only when this
// user or root owns it (rejected otherwise, naming it); at most 40 are followed. ok; miss when a
// name on the way does not exist; rejected or error with the reason.
RemoteResult open_directory_walked(const std::string& path, WalkedDirectory* out);

// strerror's text of an errno value (the shared directory's reasons quote it).
std::string errno_text(int error);

}  // namespace jitcache
