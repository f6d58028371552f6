#include "store/files/atomic_file.hpp"

namespace jitcache::fileops {

std::error_code AtomicFile::create(const std::filesystem::path& temp) {
  discard();
  if (auto error = dir_ ? File::create_exclusive(*dir_, temp, &file_) : File::create_exclusive(temp, &file_)) {
    return error;
  }
  temp_ = temp;
  return {};
}

std::error_code AtomicFile::write(const std::filesystem::path& temp, std::string_view bytes) {
  if (auto error = create(temp)) return error;
  if (auto error = file_.write_all(bytes)) {
    discard();
    return error;
  }
  return {};
}

std::error_code AtomicFile::commit(const std::filesystem::path& target) {
  file_.close();
  const std::error_code error = dir_ ? dir_->rename(temp_, target) : rename_replace(temp_, target);
  if (error) discard();
  temp_.clear();
  return error;
}

void AtomicFile::discard() {
  file_.close();
  if (!temp_.empty()) (void)remove(temp_);
  temp_.clear();
}

std::error_code AtomicFile::remove(const std::filesystem::path& path) const {
  return dir_ ? dir_->remove_file(path) : remove_file(path);
}

}  // namespace jitcache::fileops
