// What `jitcache replay` and its capture-helper mode (replay_helper.cpp) share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/replay.hpp"
#include "core/settings.hpp"
#include "hashing/digest.hpp"

namespace jitcache::tool {

struct ReplayOptions {
  std::string inputs;         // the record's digest
  std::string device_digest;  // the recorded key's device component
  std::vector<std::string> components;  // warm: "name=digest" of the recorded key: they must match
  std::string expect_key;     // capture helper: the app's key
  unsigned time_limit_s = 600;
  int result_fd = -1;
  bool helper = false;  // started by an app (capture = helper): low priority, failures counted
  int socket_fd = -1;             // helper: where its app sends jobs (core/capture_helper.hpp)
  std::int64_t for_pid = 0;       // helper: the app it works for
  bool at_exit = false;           // helper's job: started after its app exited
  bool waited_for = false;        // helper's job: built at the app's priority, another process waited for it
  bool lock_held_by_parent = false;  // helper's worker: the helper holds the key's build lock
  std::optional<std::string> record;  // helper's worker: the recorded inputs, sent by the app (else the store's)
  std::string scratch;  // the PoCL scratch folder its parent made for it (tools/lib/replay_scratch.hpp)
  bool in_apps_driver_cache = false;  // helper's worker: builds in the app's PoCL cache (apps_driver_cache.hpp)
};

// Rebuilds one recorded program in this process (core/replay.hpp) as `options` say.
ReplayResult replay_one(const ReplayOptions& options);

// Built here, or already stored: anything else (no matching device, a failure) leaves the key unstored.
bool done(const ReplayResult& result);

// A failed capture is counted here: the app may be gone.
void count_helper_failure(const char* counter_name);

// The capture helper (replay_helper.cpp): builds the jobs its app sends until the app closes the socket.
int run_helper(const ReplayOptions& options);

}  // namespace jitcache::tool
