#include "store/remote/shared_dir_path.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include "store/files/file_ops.hpp"

namespace jitcache {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's own path walk (ELOOP past it)


struct Step {
  int fd;
  std::string path;
};

class Walk {
 public:
  ~Walk() {
    for (const Step& step : steps_) ::close(step.fd);
  }
  bool start_at_root() {
    reset();
    const int root = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return false;
    steps_.push_back({root, ""});
    return true;
  }
  void reset() {
    for (const Step& step : steps_) ::close(step.fd);
    steps_.clear();
  }
  const Step& top() const { return steps_.back(); }
  std::string path_of(const std::string& name) const { return top().path + "/" + name; }
  void up() {
    if (steps_.size() > 1) {
      ::close(steps_.back().fd);
      steps_.pop_back();
    }
  }
  void down(int fd, const std::string& name) { steps_.push_back({fd, path_of(name)}); }
  // The folders above the last step, nearest first; the last step's fd moves to the caller.
  void finish(WalkedDirectory* out) {
    for (std::size_t i = steps_.size() - 1; i-- > 0;) {
      FolderAbove folder{steps_[i].path.empty() ? "/" : steps_[i].path, {}};
      (void)::fstat(steps_[i].fd, &folder.st);
      out->above.push_back(folder);
    }
    out->resolved = top().path.empty() ? "/" : top().path;
    out->fd = steps_.back().fd;
    steps_.pop_back();
  }

 private:
  std::vector<Step> steps_;
};

}  // namespace

std::vector<std::string> path_steps(const std::string& path) {
  std::vector<std::string> steps;
  for (std::size_t start = 0; start < path.size();) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    if (end > start) steps.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return steps;
}

RemoteResult open_directory_walked(const std::string& path, WalkedDirectory* out) {
  Walk walk;
  if (!walk.start_at_root()) return remote_result(RemoteStatus::error, "/: " + errno_text(errno));
  std::vector<FolderAbove> link_holders;
  const std::vector<std::string> path_names = path_steps(path);
  std::deque<std::string> names(path_names.begin(), path_names.end());
  int links = 0;
  while (!names.empty()) {
    const std::string name = names.front();
    names.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      walk.up();
      continue;
    }
    struct stat st {};
    if (::fstatat(walk.top().fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int error = errno;
      if (error == ENOENT) return remote_result(RemoteStatus::miss, path + " does not exist");
      return remote_result(RemoteStatus::error, walk.path_of(name) + ": " + errno_text(error));
    }
    if (S_ISLNK(st.st_mode)) {
      // Whoever owns a link decides where it points: only this user and root may.
      if (st.st_uid != fileops::current_user() && st.st_uid != 0) {
        return remote_result(RemoteStatus::rejected, walk.path_of(name) + " is a symbolic link owned by uid " +
                                                         std::to_string(st.st_uid) +
                                                         ", who could point it anywhere; name the directory it "
                                                         "points to");
      }
      if (++links > kMaxLinks) return remote_result(RemoteStatus::rejected, path + ": too many symbolic links");
      std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
      const ssize_t length = ::readlinkat(walk.top().fd, name.c_str(), target.data(), target.size());
      if (length < 0 || static_cast<std::size_t>(length) >= target.size())
        return remote_result(RemoteStatus::error, walk.path_of(name) + ": the link changed while it was read");
      target.resize(static_cast<std::size_t>(length));
      FolderAbove holder{walk.top().path.empty() ? "/" : walk.top().path, {}};
      (void)::fstat(walk.top().fd, &holder.st);
      link_holders.push_back(holder);
      const std::vector<std::string> target_steps = path_steps(target);
      std::deque<std::string> rest(target_steps.begin(), target_steps.end());
      rest.insert(rest.end(), names.begin(), names.end());
      names.swap(rest);
      if (!target.empty() && target.front() == '/' && !walk.start_at_root())
        return remote_result(RemoteStatus::error, "/: " + errno_text(errno));
      continue;
    }
    const int next = ::openat(walk.top().fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (next < 0) {
      const int error = errno;
      if (error == ENOENT) return remote_result(RemoteStatus::miss, path + " does not exist");
      if (error == ENOTDIR || error == ELOOP)  // replaced since it was looked at, or no folder
        return remote_result(RemoteStatus::rejected, walk.path_of(name) + " is not a directory");
      return remote_result(RemoteStatus::error, walk.path_of(name) + ": " + errno_text(error));
    }
    walk.down(next, name);
  }
  walk.finish(out);
  out->above.insert(out->above.end(), link_holders.begin(), link_holders.end());
  return remote_result(RemoteStatus::ok);
}

std::string errno_text(int error) { return std::strerror(error); }

}  // namespace jitcache
