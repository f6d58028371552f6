// A replay's private PoCL scratch folder (POCL_CACHE_DIR), made and removed by the process that
// starts the replay, not by the replay itself. The app's folder may be gone or unusable when its
// helper builds (harnesses and batch jobs remove a throw-away one when the app exits, even while a
// helper builds in it), so every replay builds in a folder of its own; and a replay can die in the
// driver (a crash, its time limit), so the folder belongs to its parent, which removes it once the
// replay is reaped.
//
// The parent itself may be killed with its process group (SIGKILL: no destructor runs). So each
// folder holds `.owner`, locked (flock) by its maker for as long as that process lives: the kernel
// lets the lock go however it dies. The first ReplayScratch of a process removes this user's
// folders whose `.owner` it can lock: nothing is left in the temp dir for longer than until the
// next helper or `jitcache warm` starts.
#pragma once

#include <filesystem>

namespace jitcache {

class ReplayScratch {
 public:
  ReplayScratch();  // a fresh <temp dir>/jitcache-replay-XXXXXX, or none (path() empty) when it cannot be made
  ~ReplayScratch();
  ReplayScratch(const ReplayScratch&) = delete;
  ReplayScratch& operator=(const ReplayScratch&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int owner_ = -1;  // `.owner`, locked while this object lives
};

}  // namespace jitcache
