// Files a user names to the tool (`show --extract FILE`, `pack create -o FILE`, `--keys-from FILE`,
// `--sign KEY`, `explain TRACE`): the tool may run as root in a folder others can write (/tmp),
// where the name may already be someone else's link, FIFO or device node.
//
// Reading: a regular file only, opened non-blocking (a FIFO never blocks) and checked by fstat
// before a byte is read, at most `max_bytes` (/dev/zero is refused, not read until memory runs
// out). A symbolic link as the last component is followed only when this user or root owns it: a
// link another user planted is refused (and never followed to a file he could not read himself).
//
// Writing: the one atomic writer. A new file with an unpredictable name beside the target
// (O_EXCL | O_NOFOLLOW), written, flushed and renamed over the target; the target must be missing
// or a regular file (a link, FIFO, device node or folder there is refused and left as it is). A
// failure at any step leaves the target untouched and removes the new file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "store/files/atomic_file.hpp"
#include "store/files/file_ops.hpp"

namespace jitcache {

// The whole file, or false with `error` naming the path and what is wrong.
bool read_user_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string* bytes,
                    std::string* error);

// A file being written in place of `target` (a fileops::AtomicFile, with the checks and messages a
// user's own path needs); removed on destruction unless committed.
class AtomicOutput {
 public:

  // Checks the target and creates the new file with `mode` (whatever the umask). False + `error`.
  bool begin(const std::filesystem::path& target, std::uint32_t mode, std::string* error);
  const fileops::File& file() const { return output_.file(); }
  const std::filesystem::path& temp_path() const { return output_.temp(); }
  // Flushes, checks the target again (it may have been replaced meanwhile), renames. False + `error`.
  bool commit(std::string* error);

 private:
  std::filesystem::path target_;
  fileops::AtomicFile output_;
};

// `bytes` as the whole of `target`, by AtomicOutput. False + `error`.
bool write_user_file(const std::filesystem::path& target, std::string_view bytes, std::uint32_t mode,
                     std::string* error);

}  // namespace jitcache
