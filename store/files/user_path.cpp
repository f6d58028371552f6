#include "store/files/user_path.hpp"

#include <cstdio>
#include <random>

namespace jitcache {
namespace {

const char* kind_name(fileops::FileKind kind) {
  switch (kind) {
    case fileops::FileKind::missing: return "missing";
    case fileops::FileKind::regular: return "a regular file";
    case fileops::FileKind::directory: return "a folder";
    case fileops::FileKind::symlink: return "a symbolic link";
    case fileops::FileKind::other: return "a device, FIFO or socket";
  }
  return "?";
}

// What may stand at an output's name: nothing yet, or a regular file to replace.
bool replaceable(const std::filesystem::path& target, std::string* error) {
  fileops::FileInfo info;
  if (auto e = fileops::stat_nofollow(target, &info)) {
    *error = target.string() + ": " + e.message();
    return false;
  }
  if (info.kind == fileops::FileKind::missing || info.kind == fileops::FileKind::regular) return true;
  *error = target.string() + " is " + kind_name(info.kind) + ", not a regular file: refused, left as it is";
  return false;
}

std::string random_suffix() {
  std::random_device device;
  std::uniform_int_distribution<std::uint64_t> pick;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(pick(device)));
  return text;
}

}  // namespace

bool read_user_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string* bytes,
                    std::string* error) {
  std::filesystem::path opened = path;
  fileops::FileInfo link;
  if (auto e = fileops::stat_nofollow(path, &link)) {
    *error = path.string() + ": " + e.message();
    return false;
  }
  if (link.kind == fileops::FileKind::missing) {
    *error = path.string() + ": no such file";
    return false;
  }
  if (link.kind == fileops::FileKind::symlink) {
    // Ours or root's: followed. Anyone else's is a name he chose for a file we would read for him.
    if (link.owner != fileops::current_user() && link.owner != 0) {
      *error = path.string() + " is a symbolic link owned by uid " + std::to_string(link.owner) +
               " (not by this user or root): refused";
      return false;
    }
    std::error_code e;
    opened = std::filesystem::canonical(path, e);
    if (e) {
      *error = path.string() + ": " + e.message();
      return false;
    }
  }
  fileops::File file;
  if (auto e = fileops::File::open_read(opened, &file)) {  // no-follow, non-blocking, regular only
    *error = path.string() + (e == fileops::TrustError::not_regular ? " is not a regular file (a device, FIFO or folder)"
                                                                     : ": " + e.message());
    return false;
  }
  if (auto e = file.read_all(bytes, max_bytes)) {
    *error = path.string() + (e == std::errc::file_too_large
                                  ? " is larger than " + std::to_string(max_bytes) + " bytes: refused unread"
                                  : ": " + e.message());
    return false;
  }
  return true;
}

bool AtomicOutput::begin(const std::filesystem::path& target, std::uint32_t mode, std::string* error) {
  target_ = target;
  if (!replaceable(target, error)) return false;
  std::filesystem::path temp = target;
  temp += ".tmp-" + random_suffix();
  if (auto e = output_.create(temp)) {
    *error = "cannot create " + temp.string() + ": " + e.message();
    return false;
  }
  if (auto e = output_.file().set_mode(mode)) {
    *error = "cannot set the mode of " + temp.string() + ": " + e.message();
    return false;
  }
  return true;
}

bool AtomicOutput::commit(std::string* error) {
  if (auto e = output_.file().sync()) {
    *error = "cannot write " + output_.temp().string() + ": " + e.message();
    return false;
  }
  if (!replaceable(target_, error)) return false;
  if (auto e = output_.commit(target_)) {
    *error = "cannot rename into " + target_.string() + ": " + e.message();
    return false;
  }
  return true;
}

bool write_user_file(const std::filesystem::path& target, std::string_view bytes, std::uint32_t mode,
                     std::string* error) {
  AtomicOutput output;
  if (!output.begin(target, mode, error)) return false;
  if (auto e = output.file().write_all(bytes)) {
    *error = "cannot write " + output.temp_path().string() + ": " + e.message();
    return false;
  }
  return output.commit(error);
}

}  // namespace jitcache
