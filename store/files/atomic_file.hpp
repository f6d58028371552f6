// A file written whole under a temporary name, then renamed over its target in one step: a reader
// sees the old file or the new one, never a part of either. Every writer of a whole file uses it:
// the store's entries, input records and shard indexes, the JSON files beside the store, and the
// files a user names to the tool (packs, exports: store/files/user_path.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "store/files/file_ops.hpp"

namespace jitcache::fileops {

class AtomicFile {
 public:
  // Names relative to `dir`: the store's writers, whose every step the trust rule checks and no
  // path is resolved twice. `dir` must outlive this object.
  explicit AtomicFile(const Dir& dir) : dir_(&dir) {}
  // Names as paths: a file a user names, whose folder (/tmp, say) the store's rule would refuse.
  AtomicFile() = default;
  ~AtomicFile() { discard(); }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Creates the temporary `temp` (it must not exist) and writes `bytes` to it.
  std::error_code write(const std::filesystem::path& temp, std::string_view bytes);
  // Creates the temporary `temp` (it must not exist) and leaves it open for writes through file().
  std::error_code create(const std::filesystem::path& temp);
  const File& file() const { return file_; }
  const std::filesystem::path& temp() const { return temp_; }
  // Closes the temporary and renames it over `target`. On failure the temporary is removed.
  std::error_code commit(const std::filesystem::path& target);
  // Removes the temporary, if there is one not yet committed.
  void discard();

 private:
  std::error_code remove(const std::filesystem::path& path) const;

  const Dir* dir_ = nullptr;
  File file_;
  std::filesystem::path temp_;  // empty: none pending
};

}  // namespace jitcache::fileops
