// The few file-system calls the store needs, behind one small interface so that the store logic
// stays portable: file_ops_posix.cpp implements them with open/flock/rename/futimens; a Windows
// port implements the same with CreateFileW/LockFileEx/MoveFileExW.
//
// Nothing here throws for I/O failures: every call reports a std::error_code (compare it against
// std::errc values). Files are opened close-on-exec and never through a final-component symlink.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace jitcache::fileops {

enum class FileKind { missing, regular, directory, symlink, other };

struct FileInfo {
  FileKind kind = FileKind::missing;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;   // since the Unix epoch
  std::uint32_t mode = 0;      // permission bits (0777 part)
  std::uint64_t owner = 0;     // uid
  std::uint64_t identity = 0;  // inode number: tells a replaced file from the same file
};

// Information about the path itself (a symlink is reported as symlink, not followed). A missing
// path is not an error: kind == missing and an empty error_code.
std::error_code stat_nofollow(const std::filesystem::path& path, FileInfo* info);

// mkdir with mode 0700; succeeds when the directory already exists.
std::error_code make_private_dir(const std::filesystem::path& path);
// make_private_dir for every missing component, from the outermost down.
std::error_code make_private_dirs(const std::filesystem::path& path);

std::error_code rename_replace(const std::filesystem::path& from, const std::filesystem::path& to);
// Removes a file; a missing file is not an error.
std::error_code remove_file(const std::filesystem::path& path);
// Removes an empty directory; "not empty" and "missing" are reported as errors.
std::error_code remove_empty_dir(const std::filesystem::path& path);
// Sets a file's modification time (and access time) to the given time; tests and tools use it.
std::error_code set_mtime(const std::filesystem::path& path, std::int64_t mtime_ns);

struct DirEntry {
  std::string name;
  FileKind kind = FileKind::other;  // as reported by the directory listing; "other" if unknown
};
// Lists a directory without "." and "..".
std::error_code list_dir(const std::filesystem::path& path, std::vector<DirEntry>* entries);

std::uint64_t current_user();
std::uint64_t current_process_id();
std::int64_t now_ns();  // wall clock, the same clock file mtimes use

// An open file. Move-only; closes on destruction.
class File {
 public:
  File() = default;
  ~File();
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  static std::error_code open_read(const std::filesystem::path& path, File* file);
  // Creates a new file (mode 0600); fails with file_exists when the name is taken.
  static std::error_code create_exclusive(const std::filesystem::path& path, File* file);
  // Opens read-write, creating the file (mode 0600) if missing.
  static std::error_code open_or_create(const std::filesystem::path& path, File* file);

  bool is_open() const { return handle_ >= 0; }
  std::error_code info(FileInfo* info) const;
  // Reads the whole file; fails with file_too_large when it is larger than max_bytes.
  std::error_code read_all(std::string* out, std::uint64_t max_bytes) const;
  std::error_code read_at(std::uint64_t offset, std::size_t count, std::string* out) const;
  std::error_code write_all(std::string_view data) const;
  std::error_code write_at(std::uint64_t offset, std::string_view data) const;
  std::error_code truncate(std::uint64_t size) const;
  // Sets access and modification time to now: the store's LRU clock.
  std::error_code touch_now() const;
  void close();

 private:
  friend class FileLock;
  std::intptr_t handle_ = -1;  // fd on POSIX
};

// An exclusive advisory lock on a lock file, held until destruction. Locks belong to the open
// file, so two handles conflict even inside one process and a forked child never shares one.
class FileLock {
 public:
  FileLock() = default;
  FileLock(FileLock&&) noexcept = default;
  FileLock& operator=(FileLock&&) noexcept = default;

  // Waits at most `wait` (zero: a single try). Fails with resource_unavailable_try_again when
  // another holder kept the lock for the whole wait.
  static std::error_code acquire(const std::filesystem::path& path, std::chrono::milliseconds wait,
                                 FileLock* lock);
  bool held() const { return file_.is_open(); }
  // The locked file itself (its identity tells a lock file that was replaced since it was opened).
  std::error_code info(FileInfo* info) const { return file_.info(info); }

 private:
  File file_;  // closing it releases the lock
};

}  // namespace jitcache::fileops
