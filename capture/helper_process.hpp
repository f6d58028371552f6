// The capture helper's own process (`jitcache replay --helper`, started by capture/hand_over.hpp):
// one per app, reading jobs from the app's socket for as long as the app runs and building them
// one by one in a worker process that keeps the driver loaded. What the worker runs against the
// driver (the API adapters) is the tool's to give (HelperWork): capture/ knows no API.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "capture/replay.hpp"
#include "core/settings.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {

// One replay as `jitcache replay` is asked for it, by `jitcache warm` or by the capture helper.
struct ReplayOptions {
  std::string inputs;         // the record's digest
  std::string device_digest;  // the recorded key's device component
  std::vector<std::string> components;  // warm: "name=digest" of the recorded key: they must match
  std::string expect_key;     // capture helper: the app's key
  unsigned time_limit_s = 600;
  int result_fd = -1;
  bool helper = false;  // started by an app (capture = helper): low priority, failures counted
  int socket_fd = -1;             // helper: where its app sends jobs (capture/hand_over.hpp)
  std::int64_t for_pid = 0;       // helper: the app it works for
  bool at_exit = false;           // helper's job: started after its app exited
  bool waited_for = false;        // helper's job: built at the app's priority, another process waited for it
  bool lock_held_by_parent = false;  // helper's worker: the helper holds the key's build lock
  std::optional<std::string> record;  // helper's worker: the recorded inputs, sent by the app (else the store's)
  std::string scratch;  // the PoCL scratch folder its parent made for it (capture/replay_scratch.hpp)
  bool in_apps_driver_cache = false;  // helper's worker: builds in the app's PoCL cache (apps_driver_cache.hpp)
};

// What the helper's worker runs in its own process.
struct HelperWork {
  std::function<ReplayResult(const ReplayOptions&)> replay_one;  // one recorded program, stored
  // Loads the driver for the device whose key component digest is `device_digest` (capture/replay.hpp, warm_up).
  std::function<void(const std::string& device_digest, bool load_compiler)> warm_up;
};

// Built here, or already stored: anything else (no matching device, a failure) leaves the key unstored.
bool replay_done(const ReplayResult& result);

// A failed capture is counted here: the app may be gone.
void count_helper_failure(const char* counter_name);

// Builds the jobs its app sends on `options.socket_fd` until the app closes the socket, storing in
// `store`. `apps_driver_cache`: the app's PoCL kernel cache folder, none when PoCL's cache is off.
int run_capture_helper(const ReplayOptions& options, DiskStore& store, const Settings& settings, const HelperWork& work,
                       std::optional<std::filesystem::path> apps_driver_cache);

}  // namespace jitcache
