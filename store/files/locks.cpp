// What FileLock and ProcessLock do the same on every platform (file_ops.hpp): open the file, then
// lock it. The locking itself is the platform's (file_ops_posix.cpp, file_ops_win32.cpp).
#include "store/files/file_ops.hpp"

namespace jitcache::fileops {

std::error_code FileLock::acquire(const Dir& dir, const std::filesystem::path& relative,
                                  std::chrono::milliseconds wait, FileLock* lock) {
  File file;
  if (auto error = File::open_or_create(dir, relative, &file)) return error;
  return lock_file(std::move(file), wait, lock);
}

std::error_code FileLock::acquire_shared(const Dir& dir, const std::filesystem::path& relative,
                                         std::chrono::milliseconds wait, FileLock* lock) {
  File file;
  if (auto error = File::open_or_create(dir, relative, &file)) return error;
  return lock_file(std::move(file), wait, lock, /*shared=*/true);
}

std::error_code FileLock::acquire(const std::filesystem::path& path, std::chrono::milliseconds wait,
                                  FileLock* lock) {
  File file;
  if (auto error = File::open_or_create(path, &file)) return error;
  return lock_file(std::move(file), wait, lock);
}

std::error_code ProcessLock::create(const Dir& dir, const std::filesystem::path& temp,
                                    const std::filesystem::path& name, ProcessLock* lock) {
  File file;
  if (auto error = File::create_exclusive(dir, temp, &file)) return error;
  std::error_code error = lock_whole(file);
  if (!error) error = dir.rename(temp, name);
  if (error) {
    file.close();
    (void)dir.remove_file(temp);
    return error;
  }
  lock->file_ = std::move(file);
  return {};
}

}  // namespace jitcache::fileops
