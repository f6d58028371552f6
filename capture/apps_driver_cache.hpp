// Where a capture helper's worker builds. In the app's own PoCL kernel cache while that
// folder is still the one it was when the helper started: the app's build left each program there,
// so the worker's build of it costs about a load (no front end, no kernel library), and the worker
// adds only what the binary needs (every kernel's code). Otherwise (PoCL's cache off, or the folder
// gone or replaced: a harness removed its throw-away folder when the app exited, and PoCL would
// make it again) in a private scratch folder, as before (capture/replay_scratch.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <utility>

#include <sys/types.h>

namespace jitcache {

class AppsDriverCache {
 public:
  // `folder`: the app's PoCL kernel cache (shim/opencl/pocl_cache_folder.hpp), none when PoCL's
  // cache is off. Usable while it is a folder.
  explicit AppsDriverCache(std::optional<std::filesystem::path> folder);
  // Still the same folder. Once it is not, never again: a folder made anew is no longer the app's.
  bool usable();

 private:
  std::filesystem::path path_;
  std::optional<std::pair<dev_t, ino_t>> identity_;
};

}  // namespace jitcache
