// Where a capture helper's worker builds (issue 39). In the app's own PoCL kernel cache while that
// folder is still the one it was when the helper started: the app's build left each program there,
// so the worker's build of it costs about a load (no front end, no kernel library), and the worker
// adds only what the binary needs (every kernel's code). Otherwise (PoCL's cache off, or the folder
// gone or replaced: a harness removed its throw-away folder when the app exited, and PoCL would
// make it again) in a private scratch folder, as before (tools/lib/replay_scratch.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <utility>

#include <sys/types.h>

namespace jitcache::tool {

class AppsDriverCache {
 public:
  AppsDriverCache();  // the app's PoCL kernel cache, when PoCL's cache is on and it is a folder
  // Still the same folder. Once it is not, never again: a folder made anew is no longer the app's.
  bool usable();

 private:
  std::filesystem::path path_;
  std::optional<std::pair<dev_t, ino_t>> identity_;
};

}  // namespace jitcache::tool
