// POSIX implementation of file_ops.hpp.
#include "store/files/file_ops.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <thread>

namespace jitcache::fileops {
namespace {

std::error_code last_error() { return {errno, std::generic_category()}; }

std::int64_t to_ns(const struct timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

FileKind kind_of(mode_t mode) {
  if (S_ISREG(mode)) return FileKind::regular;
  if (S_ISDIR(mode)) return FileKind::directory;
  if (S_ISLNK(mode)) return FileKind::symlink;
  return FileKind::other;
}

void fill(const struct stat& st, FileInfo* info) {
  info->kind = kind_of(st.st_mode);
  info->size = static_cast<std::uint64_t>(st.st_size);
  info->mtime_ns = to_ns(st.st_mtim);
  info->mode = static_cast<std::uint32_t>(st.st_mode & 07777);
  info->owner = st.st_uid;
  info->identity = st.st_ino;
}

int fd_of(std::intptr_t handle) { return static_cast<int>(handle); }

struct timespec to_timespec(std::int64_t ns) {
  struct timespec t {};
  t.tv_sec = static_cast<time_t>(ns / 1000000000);
  t.tv_nsec = static_cast<long>(ns % 1000000000);
  return t;
}

std::error_code list_fd(int fd, std::vector<DirEntry>* entries);

// Writing past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills the process: the app's
// limit must turn into a failed store, never into the app's death. So refuse such a write first.
bool exceeds_file_size_limit(std::uint64_t end_offset) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return false;
  return end_offset > static_cast<std::uint64_t>(limit.rlim_cur);
}

// Whether `path` exists as a directory; `follow`: a symlink to a directory counts.
std::error_code check_directory(const std::filesystem::path& path, bool follow) {
  struct stat st {};
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return last_error();
  if (!S_ISDIR(st.st_mode)) return std::make_error_code(std::errc::not_a_directory);
  return {};
}

// Every open: close-on-exec, no final symlink, and non-blocking so that a FIFO or a device in
// place of a file returns at once instead of hanging the app (O_NONBLOCK changes nothing for
// regular files and folders). `base`: AT_FDCWD or a folder fd.
int open_at(int base, const char* name, int flags) {
  int fd;
  do {
    fd = ::openat(base, name, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// A file this process just created gets exactly 0600 (a folder 0700), whatever the umask.
std::error_code fix_mode(int fd, mode_t mode) {
  if (::fchmod(fd, mode) != 0) return last_error();
  return {};
}

// After O_CREAT without O_EXCL we cannot tell whether we created the file: a file of ours whose
// mode lacks what we need (a creation under umask 0277) or has more (umask 000) is put right.
std::error_code settle_created_mode(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return last_error();
  if (st.st_uid == ::geteuid() && (st.st_mode & 07777) != 0600 && st.st_size == 0) return fix_mode(fd, 0600);
  return {};
}

std::error_code open_fd(const std::filesystem::path& path, int flags, std::intptr_t* handle) {
  const int fd = open_at(AT_FDCWD, path.c_str(), flags);
  if (fd < 0) return last_error();
  if (flags & O_CREAT) {
    auto error = (flags & O_EXCL) ? fix_mode(fd, 0600) : settle_created_mode(fd);
    if (error) {
      ::close(fd);
      return error;
    }
  }
  *handle = fd;
  return {};
}

std::error_code require_regular(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return last_error();
  if (!S_ISREG(st.st_mode)) return make_error_code(TrustError::not_regular);
  return {};
}

// A folder this process just made gets exactly 0700, whatever the umask.
std::error_code fix_new_dir_mode(int base, const char* name) {
  const int fd = open_at(base, name, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return last_error();
  auto error = fix_mode(fd, 0700);
  ::close(fd);
  return error;
}

// mkdir with exactly 0700; an existing folder is fine when it is a folder (not a symlink).
std::error_code make_dir_at(int base, const char* name, bool check_trust) {
  if (::mkdirat(base, name, 0700) == 0) return fix_new_dir_mode(base, name);
  if (errno != EEXIST) return last_error();
  const int fd = open_at(base, name, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return errno == ELOOP ? std::make_error_code(std::errc::not_a_directory) : last_error();
  struct stat st {};
  std::error_code error;
  if (::fstat(fd, &st) != 0) {
    error = last_error();
  } else if (check_trust) {
    FileInfo info;
    fill(st, &info);
    error = check_trusted(info);
  }
  ::close(fd);
  return error;
}

// Folders below a Dir are only passed through (openat, mkdirat, renameat, fstat), never read
// through the fd itself: O_PATH makes those opens cheaper (a warm hit opens two).
constexpr int kWalkFlags = O_PATH | O_DIRECTORY;

// A relative path split into plain names; "", ".", ".." and absolute paths are refused.
std::error_code plain_names(const std::filesystem::path& relative, std::vector<std::string>* names) {
  names->clear();
  if (relative.is_absolute()) return std::make_error_code(std::errc::invalid_argument);
  for (const auto& part : relative) {
    const std::string name = part.string();
    if (name.empty() || name == "." ) continue;
    if (name == "..") return std::make_error_code(std::errc::invalid_argument);
    names->push_back(name);
  }
  return {};
}

// The folder that holds the last name of a relative path, reached one folder at a time from
// `base` without following symlinks; with `check_trust`, every folder passed must be trusted.
class Parent {
 public:
  Parent() = default;
  ~Parent() { if (owned_) ::close(fd_); }
  Parent(const Parent&) = delete;
  Parent& operator=(const Parent&) = delete;

  std::error_code walk(int base, const std::filesystem::path& relative, bool check_trust) {
    std::vector<std::string> names;
    if (auto error = plain_names(relative, &names)) return error;
    if (names.empty()) return std::make_error_code(std::errc::invalid_argument);
    if (base < 0) return std::make_error_code(std::errc::no_such_file_or_directory);  // a closed Dir
    fd_ = base;
    for (std::size_t i = 0; i + 1 < names.size(); ++i) {
      const int next = open_at(fd_, names[i].c_str(), kWalkFlags);
      if (next < 0) {
        // A symlink where a folder should be is reported as "not a directory", like a file there.
        return errno == ELOOP ? std::make_error_code(std::errc::not_a_directory) : last_error();
      }
      if (owned_) ::close(fd_);
      fd_ = next;
      owned_ = true;
      if (check_trust) {
        struct stat st {};
        if (::fstat(fd_, &st) != 0) return last_error();
        FileInfo info;
        fill(st, &info);
        if (auto error = check_trusted(info)) return error;
      }
    }
    name_ = names.back();
    return {};
  }
  int fd() const { return fd_; }
  const char* name() const { return name_.c_str(); }

 private:
  int fd_ = -1;
  bool owned_ = false;
  std::string name_;
};

}  // namespace

std::error_code stat_nofollow(const std::filesystem::path& path, FileInfo* info) {
  struct stat st {};
  *info = FileInfo{};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return {};
    return last_error();
  }
  fill(st, info);
  return {};
}

std::error_code check_ancestors(const std::filesystem::path& path, std::string* why) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error).lexically_normal();
  if (error) return error;
  std::vector<std::filesystem::path> ancestors;
  auto add_chain = [&](std::filesystem::path folder) {
    for (;;) {
      ancestors.push_back(folder);
      if (folder == folder.parent_path() || folder.empty()) break;
      folder = folder.parent_path();
    }
  };
  std::filesystem::path start = absolute;
  if (!start.has_filename()) start = start.parent_path();  // "a/b/" -> "a/b"
  add_chain(start.parent_path());
  // The same after resolving symlinks: what the path really passes through.
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(start.parent_path(), error);
  if (!error && resolved != start.parent_path()) add_chain(resolved);  // no symlink: the same chain
  for (const auto& folder : ancestors) {
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // created later by make_private_dirs, 0700
      return last_error();
    }
    const bool foreign = st.st_uid != ::geteuid() && st.st_uid != 0;
    const bool sticky = (st.st_mode & S_ISVTX) != 0;
    const bool shared = (st.st_mode & 0022) != 0 && !sticky;
    if (foreign || shared) {
      *why = "its parent folder " + folder.string() +
             (foreign ? " belongs to uid " + std::to_string(st.st_uid)
                      : " is writable by other users (mode " + std::to_string((st.st_mode >> 6) & 7) +
                            std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) +
                            ", no sticky bit)") +
             ": another user could replace it";
      return make_error_code(foreign ? TrustError::foreign_owner : TrustError::writable_by_others);
    }
  }
  return {};
}

std::error_code make_private_dir(const std::filesystem::path& path) {
  return make_dir_at(AT_FDCWD, path.c_str(), /*check_trust=*/false);
}

std::error_code make_private_dirs(const std::filesystem::path& path) {
  // Ancestors may be symlinks to directories (/var/run, a moved home); the last component, the
  // directory asked for, may not.
  std::filesystem::path target = path.lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "a/b/" -> "a/b"
  std::filesystem::path partial;
  for (auto component = target.begin(); component != target.end(); ++component) {
    partial /= *component;
    if (*component == target.root_name() || *component == target.root_directory()) continue;
    if (::mkdir(partial.c_str(), 0700) == 0) {
      if (auto error = fix_new_dir_mode(AT_FDCWD, partial.c_str())) return error;
      continue;
    }
    if (errno != EEXIST) return last_error();
    const bool last = std::next(component) == target.end();
    if (auto error = check_directory(partial, /*follow=*/!last)) return error;
  }
  return {};
}

std::error_code rename_replace(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return last_error();
  return {};
}

std::error_code remove_file(const std::filesystem::path& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return last_error();
  return {};
}

std::error_code remove_empty_dir(const std::filesystem::path& path) {
  if (::rmdir(path.c_str()) != 0) return last_error();
  return {};
}

std::error_code set_mtime(const std::filesystem::path& path, std::int64_t mtime_ns) {
  const struct timespec times[2] = {to_timespec(mtime_ns), to_timespec(mtime_ns)};
  if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) return last_error();
  return {};
}

std::error_code list_dir(const std::filesystem::path& path, std::vector<DirEntry>* entries) {
  entries->clear();
  std::intptr_t handle = -1;
  if (auto error = open_fd(path, O_RDONLY | O_DIRECTORY, &handle)) return error;
  return list_fd(fd_of(handle), entries);
}

namespace {

// Lists an open folder and closes the fd.
std::error_code list_fd(int fd, std::vector<DirEntry>* entries) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    auto error = last_error();
    ::close(fd);
    return error;
  }
  std::error_code result;
  for (;;) {
    errno = 0;
    const struct dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) result = last_error();
      break;
    }
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    DirEntry item;
    item.name = std::string(name);
    switch (entry->d_type) {
      case DT_REG: item.kind = FileKind::regular; break;
      case DT_DIR: item.kind = FileKind::directory; break;
      case DT_LNK: item.kind = FileKind::symlink; break;
      default: item.kind = FileKind::other; break;
    }
    entries->push_back(std::move(item));
  }
  ::closedir(dir);  // also closes the fd
  return result;
}

}  // namespace

std::uint64_t current_user() { return ::geteuid(); }
std::uint64_t current_process_id() { return static_cast<std::uint64_t>(::getpid()); }

std::int64_t now_ns() {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return to_ns(now);
}

File::~File() { close(); }

File::File(File&& other) noexcept : handle_(other.handle_) { other.handle_ = -1; }

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = other.handle_;
    other.handle_ = -1;
  }
  return *this;
}

void File::close() {
  if (handle_ >= 0) ::close(fd_of(handle_));  // no retry on EINTR: the fd is gone either way
  handle_ = -1;
}

std::error_code File::open_read(const std::filesystem::path& path, File* file) {
  file->close();
  if (auto error = open_fd(path, O_RDONLY, &file->handle_)) return error;
  if (auto error = require_regular(fd_of(file->handle_))) {
    file->close();
    return error;
  }
  return {};
}

std::error_code File::create_exclusive(const std::filesystem::path& path, File* file) {
  file->close();
  return open_fd(path, O_WRONLY | O_CREAT | O_EXCL, &file->handle_);
}

std::error_code File::open_or_create(const std::filesystem::path& path, File* file) {
  file->close();
  return open_fd(path, O_RDWR | O_CREAT, &file->handle_);
}

std::error_code File::sync() const {
  if (::fsync(fd_of(handle_)) != 0) return last_error();
  return {};
}

std::error_code File::set_mode(std::uint32_t mode) const {
  if (::fchmod(fd_of(handle_), static_cast<mode_t>(mode & 07777)) != 0) return last_error();
  return {};
}

std::error_code File::info(FileInfo* info) const {
  struct stat st {};
  if (::fstat(fd_of(handle_), &st) != 0) return last_error();
  fill(st, info);
  return {};
}

std::error_code File::read_all(std::string* out, std::uint64_t max_bytes) const {
  FileInfo meta;
  if (auto error = info(&meta)) return error;
  if (meta.size > max_bytes) return std::make_error_code(std::errc::file_too_large);
  out->resize(static_cast<std::size_t>(meta.size));
  std::size_t done = 0;
  while (done < out->size()) {
    ssize_t got = ::pread(fd_of(handle_), out->data() + done, out->size() - done,
                          static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return last_error();
    if (got == 0) break;  // shrank while reading: return what is there, the checks will tell
    done += static_cast<std::size_t>(got);
  }
  out->resize(done);
  return {};
}

std::error_code File::read_at(std::uint64_t offset, std::size_t count, std::string* out) const {
  out->resize(count);
  std::size_t done = 0;
  while (done < count) {
    ssize_t got = ::pread(fd_of(handle_), out->data() + done, count - done,
                          static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return last_error();
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  out->resize(done);
  return {};
}

std::error_code File::write_all(std::string_view data) const {
  const off_t position = ::lseek(fd_of(handle_), 0, SEEK_CUR);
  if (position >= 0 && exceeds_file_size_limit(static_cast<std::uint64_t>(position) + data.size())) {
    return std::make_error_code(std::errc::file_too_large);
  }
  while (!data.empty()) {
    ssize_t put = ::write(fd_of(handle_), data.data(), data.size());
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return last_error();
    data.remove_prefix(static_cast<std::size_t>(put));
  }
  return {};
}

std::error_code File::write_at(std::uint64_t offset, std::string_view data) const {
  if (exceeds_file_size_limit(offset + data.size())) return std::make_error_code(std::errc::file_too_large);
  while (!data.empty()) {
    ssize_t put = ::pwrite(fd_of(handle_), data.data(), data.size(), static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return last_error();
    data.remove_prefix(static_cast<std::size_t>(put));
    offset += static_cast<std::uint64_t>(put);
  }
  return {};
}

std::error_code File::truncate(std::uint64_t size) const {
  if (exceeds_file_size_limit(size)) return std::make_error_code(std::errc::file_too_large);
  if (::ftruncate(fd_of(handle_), static_cast<off_t>(size)) != 0) return last_error();
  return {};
}

std::error_code File::touch_now() const {
  if (::futimens(fd_of(handle_), nullptr) != 0) return last_error();
  return {};
}

namespace {

// Opens `relative` below `dir` through trusted folders; `flags` as for open(2).
std::error_code open_below(int dir_fd, const std::filesystem::path& relative, int flags, std::intptr_t* handle,
                           FileInfo* opened = nullptr) {
  Parent parent;
  if (auto error = parent.walk(dir_fd, relative, /*check_trust=*/true)) return error;
  const int fd = open_at(parent.fd(), parent.name(), flags);
  if (fd < 0) return last_error();
  std::error_code error;
  if (flags & O_CREAT) error = (flags & O_EXCL) ? fix_mode(fd, 0600) : settle_created_mode(fd);
  if (!error) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      error = last_error();
    } else if (!S_ISREG(st.st_mode)) {
      error = make_error_code(TrustError::not_regular);
    } else {
      FileInfo info;
      fill(st, &info);
      error = check_trusted(info);
      if (opened != nullptr) *opened = info;
    }
  }
  if (error) {
    ::close(fd);
    return error;
  }
  *handle = fd;
  return {};
}

}  // namespace

std::error_code File::open_read(const Dir& dir, const std::filesystem::path& relative, File* file,
                                std::uint64_t max_bytes) {
  file->close();
  FileInfo info;
  if (auto error = open_below(fd_of(dir.handle_), relative, O_RDONLY, &file->handle_, &info)) return error;
  if (info.size > max_bytes) {
    file->close();
    return std::make_error_code(std::errc::file_too_large);
  }
  return {};
}

std::error_code File::create_exclusive(const Dir& dir, const std::filesystem::path& relative, File* file) {
  file->close();
  return open_below(fd_of(dir.handle_), relative, O_WRONLY | O_CREAT | O_EXCL, &file->handle_);
}

std::error_code File::open_or_create(const Dir& dir, const std::filesystem::path& relative, File* file) {
  file->close();
  return open_below(fd_of(dir.handle_), relative, O_RDWR | O_CREAT, &file->handle_);
}

Dir::~Dir() {
  if (handle_ >= 0) ::close(fd_of(handle_));
}

Dir::Dir(Dir&& other) noexcept : handle_(other.handle_), path_(std::move(other.path_)) { other.handle_ = -1; }

Dir& Dir::operator=(Dir&& other) noexcept {
  if (this != &other) {
    if (handle_ >= 0) ::close(fd_of(handle_));
    handle_ = other.handle_;
    path_ = std::move(other.path_);
    other.handle_ = -1;
  }
  return *this;
}

namespace {

std::error_code check_open_dir(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return last_error();
  if (!S_ISDIR(st.st_mode)) return make_error_code(TrustError::not_directory);
  FileInfo info;
  fill(st, &info);
  return check_trusted(info);
}

}  // namespace

std::error_code Dir::open(const std::filesystem::path& path, Dir* dir) {
  const int fd = open_at(AT_FDCWD, path.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return errno == ELOOP ? std::make_error_code(std::errc::too_many_symbolic_link_levels) : last_error();
  if (auto error = check_open_dir(fd)) {
    ::close(fd);
    return error;
  }
  Dir opened;
  opened.handle_ = fd;
  opened.path_ = path;
  *dir = std::move(opened);
  return {};
}

std::error_code Dir::open_dir(const std::filesystem::path& relative, Dir* dir) const {
  Parent parent;
  if (auto error = parent.walk(fd_of(handle_), relative, /*check_trust=*/true)) return error;
  const int fd = open_at(parent.fd(), parent.name(), kWalkFlags);
  if (fd < 0) return errno == ELOOP ? std::make_error_code(std::errc::not_a_directory) : last_error();
  if (auto error = check_open_dir(fd)) {
    ::close(fd);
    return error;
  }
  Dir opened;
  opened.handle_ = fd;
  opened.path_ = path_ / relative;
  *dir = std::move(opened);
  return {};
}

std::error_code Dir::info(FileInfo* info) const {
  struct stat st {};
  if (::fstat(fd_of(handle_), &st) != 0) return last_error();
  fill(st, info);
  return {};
}

std::error_code Dir::stat(const std::filesystem::path& relative, FileInfo* info) const {
  *info = FileInfo{};
  Parent parent;
  if (auto error = parent.walk(fd_of(handle_), relative, /*check_trust=*/false)) {
    if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory) return {};
    return error;
  }
  struct stat st {};
  if (::fstatat(parent.fd(), parent.name(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return {};
    return last_error();
  }
  fill(st, info);
  return {};
}

std::error_code Dir::make_dir(const std::filesystem::path& relative) const {
  Parent parent;
  if (auto error = parent.walk(fd_of(handle_), relative, /*check_trust=*/true)) return error;
  return make_dir_at(parent.fd(), parent.name(), /*check_trust=*/true);
}

std::error_code Dir::rename(const std::filesystem::path& from, const std::filesystem::path& to) const {
  Parent source, target;
  if (auto error = source.walk(fd_of(handle_), from, /*check_trust=*/false)) return error;
  if (auto error = target.walk(fd_of(handle_), to, /*check_trust=*/false)) return error;
  if (::renameat(source.fd(), source.name(), target.fd(), target.name()) != 0) return last_error();
  return {};
}

std::error_code Dir::remove_file(const std::filesystem::path& relative) const {
  Parent parent;
  if (auto error = parent.walk(fd_of(handle_), relative, /*check_trust=*/false)) {
    return error == std::errc::no_such_file_or_directory ? std::error_code() : error;
  }
  if (::unlinkat(parent.fd(), parent.name(), 0) != 0 && errno != ENOENT) return last_error();
  return {};
}

std::error_code Dir::remove_empty_dir(const std::filesystem::path& relative) const {
  Parent parent;
  if (auto error = parent.walk(fd_of(handle_), relative, /*check_trust=*/false)) return error;
  if (::unlinkat(parent.fd(), parent.name(), AT_REMOVEDIR) != 0) return last_error();
  return {};
}

std::error_code Dir::list(const std::filesystem::path& relative, std::vector<DirEntry>* entries) const {
  entries->clear();
  int fd;
  std::vector<std::string> names;
  if (auto error = plain_names(relative, &names)) return error;
  if (names.empty()) {
    if (handle_ < 0) return std::make_error_code(std::errc::no_such_file_or_directory);
    fd = open_at(fd_of(handle_), ".", O_RDONLY | O_DIRECTORY);
  } else {
    Parent parent;
    if (auto error = parent.walk(fd_of(handle_), relative, /*check_trust=*/false)) return error;
    fd = open_at(parent.fd(), parent.name(), O_RDONLY | O_DIRECTORY);
  }
  if (fd < 0) return errno == ELOOP ? std::make_error_code(std::errc::not_a_directory) : last_error();
  return list_fd(fd, entries);
}

std::error_code Dir::set_mtime(const std::filesystem::path& relative, std::int64_t mtime_ns) const {
  Parent parent;
  if (auto error = parent.walk(fd_of(handle_), relative, /*check_trust=*/false)) return error;
  const struct timespec times[2] = {to_timespec(mtime_ns), to_timespec(mtime_ns)};
  if (::utimensat(parent.fd(), parent.name(), times, AT_SYMLINK_NOFOLLOW) != 0) return last_error();
  return {};
}

std::error_code FileLock::adopt(std::intptr_t handle, FileLock* lock) {
  const int fd = fd_of(handle);
  const int flags = ::fcntl(fd, F_GETFD);
  if (handle < 0 || flags < 0) return std::make_error_code(std::errc::bad_file_descriptor);
  File file;
  file.handle_ = handle;
  if (::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) return last_error();
  return lock_file(std::move(file), std::chrono::milliseconds(0), lock);
}

std::error_code FileLock::lock_file(File file, std::chrono::milliseconds wait, FileLock* lock, bool shared) {
  // Poll with a growing pause instead of a blocking flock: a stopped or hung holder must not
  // stall the application beyond `wait`.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    if (::flock(fd_of(file.handle_), (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) {
      lock->file_ = std::move(file);
      return {};
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return last_error();
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::make_error_code(std::errc::resource_unavailable_try_again);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
}

namespace {

// The whole file, however long it grows.
struct flock whole_file(short type) {
  struct flock region {};
  region.l_type = type;
  region.l_whence = SEEK_SET;
  return region;
}

}  // namespace

std::error_code ProcessLock::lock_whole(const File& file) {
  struct flock region = whole_file(F_WRLCK);
  if (::fcntl(fd_of(file.native_handle()), F_SETLK, &region) != 0) return last_error();
  return {};
}

std::error_code ProcessLock::holder(const Dir& dir, const std::filesystem::path& relative, std::int64_t* pid) {
  File file;
  if (auto error = File::open_read(dir, relative, &file, 0)) return error;
  struct flock region = whole_file(F_WRLCK);
  if (::fcntl(fd_of(file.native_handle()), F_GETLK, &region) != 0) return last_error();
  // A pid the kernel cannot translate into this process's namespace reads 0 (-1 for an OFD lock).
  if (region.l_type == F_UNLCK) {
    *pid = 0;
  } else {
    *pid = region.l_pid > 0 ? region.l_pid : kHolderNotVisible;
  }
  return {};
}

}  // namespace jitcache::fileops
