// Windows implementation of file_ops.hpp. Paths reach the OS as UTF-16 (std::filesystem::path is
// wide on Windows). Every handle is opened with FILE_SHARE_DELETE so that an entry can be renamed
// over or removed while another process reads it, as on POSIX. Windows has no mode bits and no
// uid: the root's protection is its per-user ACL under %LOCALAPPDATA%, so files report mode
// 0700/0600 and the current user as owner.
//
// Dir: Windows has handle-relative opens only through the native API, so a Dir keeps its path
// and pins the folder instead: its handle is opened without FILE_SHARE_DELETE, so the folder
// cannot be renamed, removed or replaced by a junction while the store holds it, and every
// relative operation goes through that same, pinned path (reparse points are never followed).
#include "store/files/file_ops.hpp"

#include <windows.h>

#include <algorithm>
#include <thread>

namespace jitcache::fileops {
namespace {

constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
constexpr std::uint64_t kTicksFrom1601To1970 = 116444736000000000ull;  // 100 ns ticks
constexpr std::uint64_t kSyntheticOwner = 0;  // "this user": Windows has ACLs, not uids

// Win32 errors as the std::errc values the store compares against.
std::error_code to_error(DWORD code) {
  switch (code) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_NAME: return std::make_error_code(std::errc::no_such_file_or_directory);
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS: return std::make_error_code(std::errc::file_exists);
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION: return std::make_error_code(std::errc::permission_denied);
    case ERROR_LOCK_VIOLATION: return std::make_error_code(std::errc::resource_unavailable_try_again);
    case ERROR_DIR_NOT_EMPTY: return std::make_error_code(std::errc::directory_not_empty);
    case ERROR_DIRECTORY: return std::make_error_code(std::errc::not_a_directory);
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL: return std::make_error_code(std::errc::no_space_on_device);
    case ERROR_WRITE_PROTECT: return std::make_error_code(std::errc::read_only_file_system);
    default: return {static_cast<int>(code), std::system_category()};
  }
}

std::error_code last_error() { return to_error(GetLastError()); }

HANDLE handle_of(std::intptr_t handle) { return reinterpret_cast<HANDLE>(handle); }

// Windows byte-range locks are mandatory: a lock takes one byte far past any data so that the lock
// file stays readable and writable by everyone while it is held.
OVERLAPPED far_byte() {
  OVERLAPPED region{};
  region.OffsetHigh = 0x40000000;
  return region;
}

std::int64_t to_unix_ns(const FILETIME& time) {
  const std::uint64_t ticks = (static_cast<std::uint64_t>(time.dwHighDateTime) << 32) | time.dwLowDateTime;
  return static_cast<std::int64_t>(ticks - kTicksFrom1601To1970) * 100;
}

FILETIME to_filetime(std::int64_t unix_ns) {
  const std::uint64_t ticks = static_cast<std::uint64_t>(unix_ns / 100) + kTicksFrom1601To1970;
  return FILETIME{static_cast<DWORD>(ticks), static_cast<DWORD>(ticks >> 32)};
}

FileKind kind_of(DWORD attributes) {
  if (attributes & FILE_ATTRIBUTE_REPARSE_POINT) return FileKind::symlink;
  if (attributes & FILE_ATTRIBUTE_DIRECTORY) return FileKind::directory;
  return FileKind::regular;
}

void fill(const BY_HANDLE_FILE_INFORMATION& data, FileInfo* info) {
  info->kind = kind_of(data.dwFileAttributes);
  info->size = (static_cast<std::uint64_t>(data.nFileSizeHigh) << 32) | data.nFileSizeLow;
  info->mtime_ns = to_unix_ns(data.ftLastWriteTime);
  info->mode = info->kind == FileKind::directory ? 0700 : 0600;
  info->owner = kSyntheticOwner;
  info->identity = (static_cast<std::uint64_t>(data.nFileIndexHigh) << 32) | data.nFileIndexLow;
}

// Opens the path itself, never what a reparse point (symlink, junction) leads to.
std::error_code open_handle(const std::filesystem::path& path, DWORD access, DWORD disposition,
                            std::intptr_t* handle) {
  HANDLE h = CreateFileW(path.c_str(), access, kShareAll, nullptr, disposition,
                         FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) return last_error();
  BY_HANDLE_FILE_INFORMATION data{};
  if (GetFileInformationByHandle(h, &data) && (data.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
    CloseHandle(h);
    return std::make_error_code(std::errc::too_many_symbolic_link_levels);
  }
  *handle = reinterpret_cast<std::intptr_t>(h);
  return {};
}

FILETIME now_filetime() {
  FILETIME now{};
  GetSystemTimePreciseAsFileTime(&now);
  return now;
}

// Another process may hold a file open for an instant (a reader, a virus scanner): retry the
// few operations that fail on that, briefly.
template <typename Operation>
BOOL retry_briefly(Operation operation) {
  for (int attempt = 0;; ++attempt) {
    if (operation()) return TRUE;
    const DWORD code = GetLastError();
    if (attempt == 20 || (code != ERROR_ACCESS_DENIED && code != ERROR_SHARING_VIOLATION)) return FALSE;
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + attempt));
  }
}

}  // namespace

std::error_code stat_nofollow(const std::filesystem::path& path, FileInfo* info) {
  *info = FileInfo{};
  std::intptr_t handle = -1;
  HANDLE h = CreateFileW(path.c_str(), FILE_READ_ATTRIBUTES, kShareAll, nullptr, OPEN_EXISTING,
                         FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    const std::error_code error = last_error();
    return error == std::errc::no_such_file_or_directory ? std::error_code() : error;
  }
  handle = reinterpret_cast<std::intptr_t>(h);
  BY_HANDLE_FILE_INFORMATION data{};
  const bool ok = GetFileInformationByHandle(handle_of(handle), &data);
  const std::error_code error = ok ? std::error_code() : last_error();
  CloseHandle(h);
  if (ok) fill(data, info);
  return error;
}

std::error_code make_private_dir(const std::filesystem::path& path) {
  if (CreateDirectoryW(path.c_str(), nullptr)) return {};
  const std::error_code error = last_error();
  if (error != std::errc::file_exists) return error;
  FileInfo info;
  if (auto stat_error = stat_nofollow(path, &info)) return stat_error;
  if (info.kind != FileKind::directory) return std::make_error_code(std::errc::not_a_directory);
  return {};
}

std::error_code make_private_dirs(const std::filesystem::path& path) {
  std::filesystem::path partial;
  for (const auto& component : path) {
    partial /= component;
    if (component == partial.root_name() || component == partial.root_directory() ||
        partial == path.root_path()) {
      continue;
    }
    if (auto error = make_private_dir(partial)) return error;
  }
  return {};
}

std::error_code rename_replace(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (!retry_briefly([&] { return MoveFileExW(from.c_str(), to.c_str(), MOVEFILE_REPLACE_EXISTING); })) {
    return last_error();
  }
  return {};
}

std::error_code remove_file(const std::filesystem::path& path) {
  if (retry_briefly([&] { return DeleteFileW(path.c_str()); })) return {};
  const std::error_code error = last_error();
  return error == std::errc::no_such_file_or_directory ? std::error_code() : error;
}

std::error_code remove_empty_dir(const std::filesystem::path& path) {
  if (!RemoveDirectoryW(path.c_str())) return last_error();
  return {};
}

std::error_code set_mtime(const std::filesystem::path& path, std::int64_t mtime_ns) {
  std::intptr_t handle = -1;
  if (auto error = open_handle(path, FILE_WRITE_ATTRIBUTES, OPEN_EXISTING, &handle)) return error;
  const FILETIME time = to_filetime(mtime_ns);
  const bool ok = SetFileTime(handle_of(handle), nullptr, &time, &time);
  const std::error_code error = ok ? std::error_code() : last_error();
  CloseHandle(handle_of(handle));
  return error;
}

std::error_code list_dir(const std::filesystem::path& path, std::vector<DirEntry>* entries) {
  entries->clear();
  WIN32_FIND_DATAW data{};
  HANDLE find = FindFirstFileExW((path / L"*").c_str(), FindExInfoBasic, &data, FindExSearchNameMatch, nullptr, 0);
  if (find == INVALID_HANDLE_VALUE) return last_error();
  std::error_code result;
  do {
    const std::wstring_view name = data.cFileName;
    if (name == L"." || name == L"..") continue;
    DirEntry item;
    const std::u8string utf8 = std::filesystem::path(name).u8string();
    item.name.assign(utf8.begin(), utf8.end());
    item.kind = kind_of(data.dwFileAttributes);
    entries->push_back(std::move(item));
  } while (FindNextFileW(find, &data));
  if (GetLastError() != ERROR_NO_MORE_FILES) result = last_error();
  FindClose(find);
  return result;
}

std::uint64_t current_user() { return kSyntheticOwner; }
std::uint64_t current_process_id() { return GetCurrentProcessId(); }
std::int64_t now_ns() { return to_unix_ns(now_filetime()); }

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
  if (handle_ >= 0) CloseHandle(handle_of(handle_));
  handle_ = -1;
}

std::error_code File::open_read(const std::filesystem::path& path, File* file) {
  file->close();
  return open_handle(path, GENERIC_READ, OPEN_EXISTING, &file->handle_);
}

std::error_code File::create_exclusive(const std::filesystem::path& path, File* file) {
  file->close();
  return open_handle(path, GENERIC_WRITE | FILE_WRITE_ATTRIBUTES, CREATE_NEW, &file->handle_);
}

std::error_code File::open_or_create(const std::filesystem::path& path, File* file) {
  file->close();
  return open_handle(path, GENERIC_READ | GENERIC_WRITE, OPEN_ALWAYS, &file->handle_);
}

std::error_code File::info(FileInfo* info) const {
  BY_HANDLE_FILE_INFORMATION data{};
  if (!GetFileInformationByHandle(handle_of(handle_), &data)) return last_error();
  fill(data, info);
  return {};
}

std::error_code File::read_all(std::string* out, std::uint64_t max_bytes) const {
  FileInfo meta;
  if (auto error = info(&meta)) return error;
  if (meta.size > max_bytes) return std::make_error_code(std::errc::file_too_large);
  return read_at(0, static_cast<std::size_t>(meta.size), out);
}

std::error_code File::read_at(std::uint64_t offset, std::size_t count, std::string* out) const {
  out->resize(count);
  std::size_t done = 0;
  while (done < count) {
    OVERLAPPED at{};
    at.Offset = static_cast<DWORD>(offset + done);
    at.OffsetHigh = static_cast<DWORD>((offset + done) >> 32);
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(count - done, 1u << 30));
    DWORD got = 0;
    if (!ReadFile(handle_of(handle_), out->data() + done, chunk, &got, &at)) {
      if (GetLastError() == ERROR_HANDLE_EOF) break;
      return last_error();
    }
    if (got == 0) break;  // shrank while reading: return what is there, the checks will tell
    done += got;
  }
  out->resize(done);
  return {};
}

std::error_code File::write_all(std::string_view data) const {
  while (!data.empty()) {
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(data.size(), 1u << 30));
    DWORD put = 0;
    if (!WriteFile(handle_of(handle_), data.data(), chunk, &put, nullptr)) return last_error();
    data.remove_prefix(put);
  }
  return {};
}

std::error_code File::write_at(std::uint64_t offset, std::string_view data) const {
  while (!data.empty()) {
    OVERLAPPED at{};
    at.Offset = static_cast<DWORD>(offset);
    at.OffsetHigh = static_cast<DWORD>(offset >> 32);
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(data.size(), 1u << 30));
    DWORD put = 0;
    if (!WriteFile(handle_of(handle_), data.data(), chunk, &put, &at)) return last_error();
    data.remove_prefix(put);
    offset += put;
  }
  return {};
}

std::error_code File::truncate(std::uint64_t size) const {
  FILE_END_OF_FILE_INFO end{};
  end.EndOfFile.QuadPart = static_cast<LONGLONG>(size);
  if (!SetFileInformationByHandle(handle_of(handle_), FileEndOfFileInfo, &end, sizeof end)) return last_error();
  return {};
}

std::error_code File::sync() const {
  if (!FlushFileBuffers(handle_of(handle_))) return last_error();
  return {};
}

std::error_code File::set_mode(std::uint32_t) const { return {}; }

std::error_code File::touch_now() const {
  const FILETIME now = now_filetime();
  if (!SetFileTime(handle_of(handle_), nullptr, &now, &now)) return last_error();
  return {};
}

std::error_code check_ancestors(const std::filesystem::path&, std::string*) { return {}; }

namespace {

std::error_code require_regular_and_size(File* file, std::uint64_t max_bytes) {
  FileInfo info;
  std::error_code error = file->info(&info);
  if (!error && info.kind != FileKind::regular) error = make_error_code(TrustError::not_regular);
  if (!error && info.size > max_bytes) error = std::make_error_code(std::errc::file_too_large);
  if (error) file->close();
  return error;
}

}  // namespace

std::error_code File::open_read(const Dir& dir, const std::filesystem::path& relative, File* file,
                                std::uint64_t max_bytes) {
  if (!dir.is_open()) return std::make_error_code(std::errc::no_such_file_or_directory);
  if (auto error = open_read(dir.path() / relative, file)) return error;
  return require_regular_and_size(file, max_bytes);
}

std::error_code File::create_exclusive(const Dir& dir, const std::filesystem::path& relative, File* file) {
  if (!dir.is_open()) return std::make_error_code(std::errc::no_such_file_or_directory);
  return create_exclusive(dir.path() / relative, file);
}

std::error_code File::open_or_create(const Dir& dir, const std::filesystem::path& relative, File* file) {
  if (!dir.is_open()) return std::make_error_code(std::errc::no_such_file_or_directory);
  if (auto error = open_or_create(dir.path() / relative, file)) return error;
  return require_regular_and_size(file, UINT64_MAX);
}

Dir::~Dir() {
  if (handle_ != -1) CloseHandle(handle_of(handle_));
}

Dir::Dir(Dir&& other) noexcept : handle_(other.handle_), path_(std::move(other.path_)) { other.handle_ = -1; }

Dir& Dir::operator=(Dir&& other) noexcept {
  if (this != &other) {
    if (handle_ != -1) CloseHandle(handle_of(handle_));
    handle_ = other.handle_;
    path_ = std::move(other.path_);
    other.handle_ = -1;
  }
  return *this;
}

std::error_code Dir::open(const std::filesystem::path& path, Dir* dir) {
  HANDLE h = CreateFileW(path.c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                         OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) return last_error();
  BY_HANDLE_FILE_INFORMATION data{};
  std::error_code error;
  if (!GetFileInformationByHandle(h, &data)) {
    error = last_error();
  } else if (data.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
    error = std::make_error_code(std::errc::too_many_symbolic_link_levels);
  } else if (!(data.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
    error = make_error_code(TrustError::not_directory);
  }
  if (error) {
    CloseHandle(h);
    return error;
  }
  Dir opened;
  opened.handle_ = reinterpret_cast<std::intptr_t>(h);
  opened.path_ = path;
  *dir = std::move(opened);
  return {};
}

std::error_code Dir::open_dir(const std::filesystem::path& relative, Dir* dir) const {
  if (handle_ == -1) return std::make_error_code(std::errc::no_such_file_or_directory);
  return open(path_ / relative, dir);
}

std::error_code Dir::info(FileInfo* info) const {
  BY_HANDLE_FILE_INFORMATION data{};
  if (!GetFileInformationByHandle(handle_of(handle_), &data)) return last_error();
  fill(data, info);
  return {};
}

// A Dir that was never opened (a read-only store whose root does not exist) holds no path: every
// relative operation must miss, never fall back to the current folder.
namespace {
std::error_code closed_dir() { return std::make_error_code(std::errc::no_such_file_or_directory); }
}  // namespace

std::error_code Dir::stat(const std::filesystem::path& relative, FileInfo* info) const {
  *info = FileInfo{};
  if (handle_ == -1) return {};
  return stat_nofollow(path_ / relative, info);
}
std::error_code Dir::make_dir(const std::filesystem::path& relative) const {
  if (handle_ == -1) return closed_dir();
  return make_private_dir(path_ / relative);
}
std::error_code Dir::rename(const std::filesystem::path& from, const std::filesystem::path& to) const {
  if (handle_ == -1) return closed_dir();
  return rename_replace(path_ / from, path_ / to);
}
std::error_code Dir::remove_file(const std::filesystem::path& relative) const {
  if (handle_ == -1) return {};
  return fileops::remove_file(path_ / relative);
}
std::error_code Dir::remove_empty_dir(const std::filesystem::path& relative) const {
  if (handle_ == -1) return closed_dir();
  return fileops::remove_empty_dir(path_ / relative);
}
std::error_code Dir::list(const std::filesystem::path& relative, std::vector<DirEntry>* entries) const {
  entries->clear();
  if (handle_ == -1) return closed_dir();
  return list_dir(relative.empty() ? path_ : path_ / relative, entries);
}
std::error_code Dir::set_mtime(const std::filesystem::path& relative, std::int64_t mtime_ns) const {
  if (handle_ == -1) return closed_dir();
  return fileops::set_mtime(path_ / relative, mtime_ns);
}

std::error_code FileLock::adopt(std::intptr_t, FileLock*) {
  return std::make_error_code(std::errc::not_supported);  // no capture helper on Windows
}

std::error_code FileLock::lock_file(File file, std::chrono::milliseconds wait, FileLock* lock, bool shared) {
  OVERLAPPED region = far_byte();
  // Poll with a growing pause: a stopped or hung holder must not stall the app beyond `wait`.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    if (LockFileEx(handle_of(file.handle_), (shared ? 0 : LOCKFILE_EXCLUSIVE_LOCK) | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &region)) {
      lock->file_ = std::move(file);
      return {};
    }
    const DWORD code = GetLastError();
    if (code != ERROR_LOCK_VIOLATION && code != ERROR_IO_PENDING) return to_error(code);
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::make_error_code(std::errc::resource_unavailable_try_again);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
}


// No capture helper runs on Windows, so nobody asks for a holder's pid: the lock is FileLock's
// exclusive byte far past any data, and a holder reads as one this process cannot see.

std::error_code ProcessLock::lock_whole(const File& file) {
  OVERLAPPED region = far_byte();
  if (!LockFileEx(handle_of(file.native_handle()), LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &region)) {
    return last_error();
  }
  return {};
}

std::error_code ProcessLock::holder(const Dir& dir, const std::filesystem::path& relative, std::int64_t* pid) {
  File file;
  if (auto error = File::open_read(dir, relative, &file, 0)) return error;
  OVERLAPPED region = far_byte();
  if (LockFileEx(handle_of(file.native_handle()), LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &region)) {
    region = far_byte();
    (void)UnlockFileEx(handle_of(file.native_handle()), 0, 1, 0, &region);
    *pid = 0;
    return {};
  }
  const DWORD code = GetLastError();
  if (code != ERROR_LOCK_VIOLATION && code != ERROR_IO_PENDING) return to_error(code);
  *pid = kHolderNotVisible;
  return {};
}

}  // namespace jitcache::fileops
