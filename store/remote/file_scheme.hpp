// The file: scheme (the client: store/remote/file_remote.hpp): file:///absolute/dir (also
// file:/absolute/dir), a directory on a shared (network) file system.
#pragma once

#include <string>

#include "store/remote_api/remote_url.hpp"

namespace jitcache {

struct FileEndpoint final : RemoteEndpoint {
  std::string path;  // absolute, percent-decoded, no "." / ".." / "//" step, no trailing '/'

  std::string redacted() const override { return "file://" + path; }
  std::unique_ptr<RemoteClient> open(RemoteConfig config) const override;  // in the client's .cpp
};

extern const RemoteScheme kFileScheme;

}  // namespace jitcache
