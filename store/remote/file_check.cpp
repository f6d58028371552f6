// FileRemote::check, doctor's look at a file:// remote's directory: who it trusts, whether this
// user can write it, free space.
#include "store/files/root_check.hpp"
#include "store/files/size_text.hpp"
#include "store/remote/file_remote.hpp"

namespace jitcache {

std::vector<RemoteFinding> FileRemote::check(bool read_only) {
  std::vector<RemoteFinding> out;
  SharedDirFacts facts;
  if (survey(&facts).status != RemoteStatus::ok) return out;  // the probe said why
  const std::string& where = endpoint_.path;
  const std::string mode = "mode " + octal_mode(facts.mode) + ", uid " + std::to_string(facts.owner) + ", gid " +
                           std::to_string(facts.group);
  if (!facts.group_shared) {
    out.push_back({"directory", "ok", where + " (" + mode + "): trusts its owner and root only", ""});
  } else if (!(facts.mode & 02000)) {
    out.push_back({"directory", "warn", where + " (" + mode + ") is group-writable but not setgid",
                   "chmod g+s " + where + ": new folders then keep the group for every tool, not just jitcache"});
  } else {
    out.push_back({"directory", "ok",
                   where + " (" + mode + "): trusts its owner, root and the members of gid " +
                       std::to_string(facts.group),
                   ""});
  }
  if (facts.mode & 01000) {
    out.push_back({"directory", "warn", where + " has the sticky bit",
                   "stale leases and tmp files of other users cannot be removed: chmod -t " + where});
  }
  if (!facts.obstructed.empty()) {
    std::string folders;
    for (const std::string& folder : facts.obstructed) folders += (folders.empty() ? "" : ", ") + folder;
    out.push_back({"folders", "fail",
                   "in " + where + ", not writable by the share's users: " + folders +
                       "; this user's records go to second names there, which users of other versions do not read",
                   "the folder's owner or root removes it (docs/remote.md, Shared directories)"});
  }
  if (!facts.writable && !read_only) {
    out.push_back({"writes", "warn", "this user cannot write " + where + ": hits are served, nothing is stored",
                   "JITCACHE_REMOTE_READ_ONLY=1 says so, or add this user to the directory's group"});
  }
  constexpr std::uint64_t kLowSpace = 1ull << 30;
  out.push_back({"space", facts.free_bytes < kLowSpace ? "warn" : "ok", size_text(facts.free_bytes) + " free on " + where,
                 facts.free_bytes < kLowSpace ? "jitcache does not evict a shared directory: clean it with a cron job "
                                                "(docs/remote.md, Shared directories)"
                                              : ""});
  return out;
}

}  // namespace jitcache
