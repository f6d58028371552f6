#include "store/files/root_check.hpp"

#include <cstdio>

namespace jitcache {

std::string octal_mode(std::uint32_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

RootCheck open_trusted_root(const std::filesystem::path& root, fileops::Dir* dir, std::string* why) {
  const std::string name = "cache directory " + root.string();
  // Advice never says "chmod": entries others could write while the folder was open to them
  // cannot be told apart from ours by their mode alone.
  const std::string advice = "; refusing to use it (remove it, or point JITCACHE_DIR elsewhere)";
  std::string ancestor_problem;
  if (auto error = fileops::check_ancestors(root, &ancestor_problem)) {
    *why = name + ": " + (ancestor_problem.empty() ? error.message() : ancestor_problem) +
           "; refusing to use it (choose a cache directory inside your home or in /tmp)";
    return RootCheck::refused;
  }
  if (auto error = fileops::Dir::open(root, dir)) {
    fileops::FileInfo info;
    (void)fileops::stat_nofollow(root, &info);
    if (error == std::errc::no_such_file_or_directory) return RootCheck::missing;
    if (info.kind == fileops::FileKind::symlink || error == std::errc::too_many_symbolic_link_levels) {
      *why = name + " is a symbolic link; refusing to use it";
    } else if (error == std::errc::not_a_directory || error == fileops::TrustError::not_directory) {
      *why = name + " is not a directory";
    } else if (error == fileops::TrustError::foreign_owner) {
      *why = name + " is owned by uid " + std::to_string(info.owner) + ", not by this user (uid " +
             std::to_string(fileops::current_user()) + ") or root" + advice;
    } else if (error == fileops::TrustError::writable_by_others) {
      *why = name + " is writable by group or others (mode " + octal_mode(info.mode) + ")" + advice;
    } else {
      *why = "cannot open " + name + ": " + error.message();
    }
    return RootCheck::refused;
  }
  return RootCheck::accepted;
}

}  // namespace jitcache
