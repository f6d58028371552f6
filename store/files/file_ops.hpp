// The few file-system calls the store needs, behind one small interface so that the store logic
// stays portable: file_ops_posix.cpp implements them with open/flock/rename/futimens; a Windows
// port implements the same with CreateFileW/LockFileEx/MoveFileExW.
//
// Nothing here throws for I/O failures: every call reports a std::error_code (compare it against
// std::errc values, or trust_error() for the trust checks). Files are opened close-on-exec,
// non-blocking (a FIFO in place of a file must not hang the app) and never through a
// final-component symlink; files and folders are created with exact modes (0600 / 0700) whatever
// the umask.
//
// Two ways to name a file: a plain path (for files outside a store: traces, stats), or a Dir
// held open plus a path relative to it. The relative form never re-walks the Dir's own path, is
// resolved one folder at a time without following symlinks, and checks every folder it passes and
// every file it opens for reading against the trust rule (is_trusted): that is how the store
// reaches everything below its root (docs/reliability.md, "Trust model").
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

// Refusals of the trust checks, as error codes of their own category (message says which).
enum class TrustError { foreign_owner = 1, writable_by_others, not_regular, not_directory };
std::error_code make_error_code(TrustError error);
bool is_trust_error(const std::error_code& error);

// The trust rule for what the store reads and writes into: owned by this user or by root (who can
// change anything anyway), and writable by nobody else (no group/other write bit). On Windows the
// per-user ACL is the protection: everything passes.
std::error_code check_trusted(const FileInfo& info);

// Refuses a path whose ancestors another user could rename or replace: every ancestor of `path`
// (as given, and after resolving symlinks) must be owned by this user or root and not writable by
// others, unless it has the sticky bit (/tmp: nobody else may rename or remove what is ours
// there). `why` names the offending ancestor.
std::error_code check_ancestors(const std::filesystem::path& path, std::string* why);

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
class Dir;

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
  // The same below a Dir. open_read also requires a regular, trusted file (check_trusted);
  // max_bytes caps its size (file_too_large beyond it).
  static std::error_code open_read(const Dir& dir, const std::filesystem::path& relative, File* file,
                                   std::uint64_t max_bytes = UINT64_MAX);
  static std::error_code create_exclusive(const Dir& dir, const std::filesystem::path& relative, File* file);
  static std::error_code open_or_create(const Dir& dir, const std::filesystem::path& relative, File* file);

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
  // Flushes what was written to the device (before a rename commits it).
  std::error_code sync() const;
  // Sets the permission bits, whatever the umask was (a no-op on Windows: the ACL decides).
  std::error_code set_mode(std::uint32_t mode) const;
  // The descriptor (POSIX) or handle, for code that writes through the platform's own calls.
  std::intptr_t native_handle() const { return handle_; }
  void close();

 private:
  friend class FileLock;
  std::intptr_t handle_ = -1;  // fd on POSIX
};

// A folder held open (an fd on POSIX). Move-only. Operations take a path relative to it made of
// plain names; each folder on the way is opened without following symlinks and, for the
// operations that read or create (open_dir, make_dir, File::*), must pass check_trusted.
// Unlinking, renaming, stat and listing do not read contents and skip the owner check, so that
// foreign files can still be moved out of the way.
class Dir {
 public:
  Dir() = default;
  ~Dir();
  Dir(Dir&& other) noexcept;
  Dir& operator=(Dir&& other) noexcept;
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;

  // Opens a folder by path (the last component may not be a symlink) and checks it is trusted.
  static std::error_code open(const std::filesystem::path& path, Dir* dir);
  // Opens a folder below this one (trusted, every step).
  std::error_code open_dir(const std::filesystem::path& relative, Dir* dir) const;

  bool is_open() const { return handle_ != -1; }
  const std::filesystem::path& path() const { return path_; }  // for messages (and Windows)
  std::error_code info(FileInfo* info) const;

  // As the path functions above, relative to this folder.
  std::error_code stat(const std::filesystem::path& relative, FileInfo* info) const;
  std::error_code make_dir(const std::filesystem::path& relative) const;  // 0700; exists: checked
  std::error_code rename(const std::filesystem::path& from, const std::filesystem::path& to) const;
  std::error_code remove_file(const std::filesystem::path& relative) const;
  std::error_code remove_empty_dir(const std::filesystem::path& relative) const;
  std::error_code list(const std::filesystem::path& relative, std::vector<DirEntry>* entries) const;
  std::error_code set_mtime(const std::filesystem::path& relative, std::int64_t mtime_ns) const;

 private:
  friend class File;
  std::intptr_t handle_ = -1;  // fd on POSIX; a handle pinning the folder on Windows
  std::filesystem::path path_;
};

// An advisory lock on a lock file (exclusive unless acquired shared), held until destruction. Locks belong to the open
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
  static std::error_code acquire(const Dir& dir, const std::filesystem::path& relative,
                                 std::chrono::milliseconds wait, FileLock* lock);
  // A shared lock instead: any number of holders, none while another holds it exclusively.
  static std::error_code acquire_shared(const Dir& dir, const std::filesystem::path& relative,
                                        std::chrono::milliseconds wait, FileLock* lock);
  // Takes a descriptor this process inherited from the lock's holder (posix_spawn): the lock
  // belongs to the open file, so locking it again succeeds at once when the descriptor holds it.
  // It is made close-on-exec. Fails with resource_unavailable_try_again when another open file
  // holds the lock; not_supported on Windows.
  static std::error_code adopt(std::intptr_t handle, FileLock* lock);
  bool held() const { return file_.is_open(); }
  // The locked file itself (its identity tells a lock file that was replaced since it was opened).
  std::error_code info(FileInfo* info) const { return file_.info(info); }
  // The descriptor, for a child process to inherit (and so hold the lock too).
  std::intptr_t native_handle() const { return file_.handle_; }
  // What the lock file says while it is held (a capture marker: the build time it would save).
  std::error_code replace_contents(std::string_view data) const {
    if (auto error = file_.truncate(0)) return error;
    return file_.write_at(0, data);
  }

 private:
  static std::error_code lock_file(File file, std::chrono::milliseconds wait, FileLock* lock, bool shared = false);
  File file_;  // closing it releases the lock
};

// A lock that belongs to the process that took it, on a file of its own (a POSIX record lock on
// the whole file): let go when the process ends, never shared with a child. Unlike FileLock, who
// holds it can be asked of the file itself, at the cost of one open, without reading the system's
// lock table, and the answer cannot be spoofed by locks on other files.
class ProcessLock {
 public:
  // Creates `temp` below `dir`, locks it, then renames it to `name` (the same file system): a file
  // at `name` that nobody holds is one whose holder has ended, never one about to be locked.
  static std::error_code create(const Dir& dir, const std::filesystem::path& temp, const std::filesystem::path& name,
                                ProcessLock* lock);
  // Who holds the lock on `relative` (a regular, trusted file): its pid as this process sees it; 0
  // when nobody does; kHolderNotVisible when a process does whose pid this one cannot see (another
  // pid namespace; on Windows, any). This process's own locks read as nobody's: never ask of a file
  // of its own (on POSIX, closing any descriptor of a file lets go of the process's lock on it).
  static constexpr std::int64_t kHolderNotVisible = -1;
  static std::error_code holder(const Dir& dir, const std::filesystem::path& relative, std::int64_t* pid);
  bool held() const { return file_.is_open(); }

 private:
  static std::error_code lock_whole(const File& file);  // the platform's part: a try, no wait
  File file_;  // closing it releases the lock
};

}  // namespace jitcache::fileops

template <>
struct std::is_error_code_enum<jitcache::fileops::TrustError> : std::true_type {};
