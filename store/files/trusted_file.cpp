#include "store/files/trusted_file.hpp"

#include "store/files/root_check.hpp"

namespace jitcache {

std::optional<std::filesystem::path> resolve_trusted_file(const std::filesystem::path& path,
                                                          std::string* why, fileops::File* opened) {
  const std::string name = path.string();
  if (!path.is_absolute()) {
    *why = name + " is not an absolute path";
    return std::nullopt;
  }
  std::error_code error;
  const std::filesystem::path resolved = std::filesystem::canonical(path, error);
  if (error) {
    *why = name + ": " + error.message();
    return std::nullopt;
  }
  std::string problem;
  // Both chains: a symlink's folder decides where it points, the target's folders what it holds.
  for (const std::filesystem::path& chain : {path, resolved}) {
    if (fileops::check_ancestors(chain, &problem)) {
      *why = name + ": " + problem;
      return std::nullopt;
    }
  }
  fileops::File file;
  fileops::FileInfo info;
  if (auto e = fileops::File::open_read(resolved, &file); e || (e = file.info(&info))) {
    *why = name + (resolved != path ? " (" + resolved.string() + ")" : "") + ": " + e.message();
    return std::nullopt;
  }
  if (auto e = fileops::check_trusted(info)) {
    *why = name + " is " +
           (e == fileops::TrustError::foreign_owner
                ? "owned by uid " + std::to_string(info.owner) + ", not by this user (uid " +
                      std::to_string(fileops::current_user()) + ") or root"
                : "writable by group or others (mode " + octal_mode(info.mode) + ")");
    return std::nullopt;
  }
  if (opened) *opened = std::move(file);
  return resolved;
}

}  // namespace jitcache
