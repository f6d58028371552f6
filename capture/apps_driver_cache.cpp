#include "capture/apps_driver_cache.hpp"

#include <sys/stat.h>

namespace jitcache {
namespace {

std::optional<std::pair<dev_t, ino_t>> folder_identity(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return std::nullopt;  // PoCL follows links too
  return std::make_pair(info.st_dev, info.st_ino);
}

}  // namespace

AppsDriverCache::AppsDriverCache(std::optional<std::filesystem::path> folder) {
  if (!folder) return;
  path_ = std::move(*folder);
  identity_ = folder_identity(path_);
}

bool AppsDriverCache::usable() {
  if (identity_ && folder_identity(path_) != identity_) identity_.reset();
  return identity_.has_value();
}

}  // namespace jitcache
