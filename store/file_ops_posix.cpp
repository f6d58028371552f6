// POSIX implementation of file_ops.hpp.
#include "store/file_ops.hpp"

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

std::error_code open_fd(const std::filesystem::path& path, int flags, std::intptr_t* handle) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, 0600);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return last_error();
  *handle = fd;
  return {};
}

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

std::error_code make_private_dir(const std::filesystem::path& path) {
  if (::mkdir(path.c_str(), 0700) == 0) return {};
  if (errno != EEXIST) return last_error();
  return check_directory(path, /*follow=*/false);
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
    if (::mkdir(partial.c_str(), 0700) == 0) continue;
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
  struct timespec times[2];
  times[0].tv_sec = static_cast<time_t>(mtime_ns / 1000000000);
  times[0].tv_nsec = static_cast<long>(mtime_ns % 1000000000);
  times[1] = times[0];
  if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) return last_error();
  return {};
}

std::error_code list_dir(const std::filesystem::path& path, std::vector<DirEntry>* entries) {
  entries->clear();
  std::intptr_t handle = -1;
  if (auto error = open_fd(path, O_RDONLY | O_DIRECTORY, &handle)) return error;
  DIR* dir = ::fdopendir(fd_of(handle));
  if (dir == nullptr) {
    auto error = last_error();
    ::close(fd_of(handle));
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
  return open_fd(path, O_RDONLY, &file->handle_);
}

std::error_code File::create_exclusive(const std::filesystem::path& path, File* file) {
  file->close();
  return open_fd(path, O_WRONLY | O_CREAT | O_EXCL, &file->handle_);
}

std::error_code File::open_or_create(const std::filesystem::path& path, File* file) {
  file->close();
  return open_fd(path, O_RDWR | O_CREAT, &file->handle_);
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

std::error_code FileLock::acquire(const std::filesystem::path& path, std::chrono::milliseconds wait,
                                  FileLock* lock) {
  File file;
  if (auto error = File::open_or_create(path, &file)) return error;
  // Poll with a growing pause instead of a blocking flock: a stopped or hung holder must not
  // stall the application beyond `wait`.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    if (::flock(fd_of(file.handle_), LOCK_EX | LOCK_NB) == 0) {
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

}  // namespace jitcache::fileops
