#include "store/remote/file_scheme.hpp"

#include <algorithm>

#include "store/remote/url_parts.hpp"

namespace jitcache {
namespace {

// ccache's form. The path is the remote's identity: two spellings must not be two caches.
std::unique_ptr<RemoteEndpoint> parse_file(std::string_view rest, std::string* error) {
  if (rest.starts_with("//")) {
    rest.remove_prefix(2);
    if (!rest.starts_with("/")) {
      *error = "a file URL names no host: file:///absolute/dir";
      return nullptr;
    }
  }
  std::optional<std::string> path = percent_decode(rest);
  if (!path || path->empty() || path->front() != '/' || path->find('\0') != std::string::npos) {
    *error = "a file remote needs an absolute directory: file:///absolute/dir";
    return nullptr;
  }
  while (path->size() > 1 && path->back() == '/') path->pop_back();
  for (std::size_t start = 1; start <= path->size();) {
    std::size_t end = std::min(path->find('/', start), path->size());
    std::string_view step = std::string_view(*path).substr(start, end - start);
    if (step == "." || step == ".." || (step.empty() && end < path->size())) {
      *error = "a file remote's directory is written without '.', '..' or '//' steps";
      return nullptr;
    }
    start = end + 1;
  }
  auto endpoint = std::make_unique<FileEndpoint>();
  endpoint->path = std::move(*path);
  return endpoint;
}

}  // namespace

const RemoteScheme kFileScheme{
    "file", "file:", "file:///shared/jitcache", parse_file, {},
    "check that the directory exists, its owner, group and mode, and the mount (docs/remote.md, Shared directories)"};

}  // namespace jitcache
