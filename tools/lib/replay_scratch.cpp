#include "tools/lib/replay_scratch.hpp"

#include <cstdlib>
#include <string>

namespace jitcache::tool {

ReplayScratch::ReplayScratch() {
  std::error_code error;
  std::string pattern = (std::filesystem::temp_directory_path(error) / "jitcache-replay-XXXXXX").string();
  if (!error && ::mkdtemp(pattern.data())) path_ = pattern;
}

ReplayScratch::~ReplayScratch() {
  std::error_code error;
  if (!path_.empty()) std::filesystem::remove_all(path_, error);
}

}  // namespace jitcache::tool
