#include "capture/replay_scratch.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace jitcache {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "jitcache-replay-";
constexpr const char* kOwner = ".owner";

// `.owner` appears already locked (made under another name, locked, then renamed), so a sweep
// never finds it free while its maker lives.
int lock_owner(const fs::path& folder) {
  const fs::path fresh = folder / ".owner-new";
  const int fd = ::open(fresh.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::rename(fresh.c_str(), (folder / kOwner).c_str()) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// This user's folders whose maker died. One without `.owner` is being made (or predates it): kept.
void remove_stale(const fs::path& temp) {
  std::error_code error;
  for (fs::directory_iterator it(temp, error), end; !error && it != end; it.increment(error)) {
    const fs::path folder = it->path();
    struct stat st {};
    if (folder.filename().string().rfind(kPrefix, 0) != 0 || ::lstat(folder.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
      continue;
    }
    const int fd = ::open((folder / kOwner).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;
    std::error_code ignored;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) fs::remove_all(folder, ignored);
    ::close(fd);
  }
}

}  // namespace

ReplayScratch::ReplayScratch() {
  std::error_code error;
  const fs::path temp = fs::temp_directory_path(error);
  if (error) return;
  static std::once_flag swept;
  std::call_once(swept, [&] { remove_stale(temp); });
  std::string pattern = (temp / (std::string(kPrefix) + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) return;
  path_ = pattern;
  owner_ = lock_owner(path_);  // without it the folder is still ours; only a crash would leave it
}

ReplayScratch::~ReplayScratch() {
  std::error_code error;
  if (!path_.empty()) fs::remove_all(path_, error);
  if (owner_ >= 0) ::close(owner_);
}

}  // namespace jitcache
