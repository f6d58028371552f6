// capture = helper (docs/settings.md, "capture"): after a missed build the app's process reads no
// binary. A detached, low-priority `jitcache replay --helper` process (setsid, nice, a time limit
// per program, not under the shim) rebuilds the recorded inputs, checks that the key it derives is
// the app's, and stores the entry through the same adapter and engine (shim/opencl/replay.hpp).
//
// Helpers never compete with the app: at most one of an app's helpers runs while the app runs
// (helper_start = one_at_a_time; none with at_exit); the others wait in a queue and the exit
// flush starts one helper for all that are left, which builds them one by one. A queued key keeps
// its build lock, and the lock's descriptor is inherited by the helper (so it holds the lock the
// moment it exists): a process that looks the key up meanwhile waits for the helper and hits.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "hashing/digest.hpp"
#include "store/disk_store.hpp"

namespace jitcache {

struct HelperJob {
  std::string inputs;         // the recorded inputs' digest
  std::string device_digest;  // the key's device component digest
  Digest128 key;              // the app's key: the helper stores nothing under any other
  KeyLock lock;               // the key's build lock, handed over (not held: the helper takes it itself)
};

struct HelperPolicy {
  unsigned time_limit_s = 600;  // per program
  bool while_running = true;    // false: no helper starts before the app exits
  DiskStore* store = nullptr;   // tells which queued keys another process waits for (started first)
};

// The `jitcache` binary the helper runs: JITCACHE_HELPER when set, else found next to the shim
// (<prefix>/bin next to <prefix>/lib/<arch>, or the build tree's tools/). Empty when none is.
std::string helper_binary();

// Starts a helper for `job` now when none of this process's runs (and the policy allows it), else
// queues it. Returns the helper's pid, 0 when queued, or -1 with `why` set (the job's lock is
// released then). A thread of this process reaps each helper, counts one that was killed
// ("capture_helper_died") and starts the next queued job.
pid_t submit_capture(HelperJob job, const HelperPolicy& policy, std::string* why);

// Another thread of this process builds `key` again while its capture is queued: it takes the
// queued job's build lock and stores the binary itself (it has the program at hand).
std::optional<KeyLock> take_queued_capture(const Digest128& key);

// At exit: starts one helper for every job still queued (it builds them one by one, each in a
// child process of its own, so that a driver crash costs one entry).
void start_queued_captures_at_exit();

// A forked child must not start helpers for its parent's queue: drops it, letting go of the locks
// (the parent's copies keep them held).
void forget_queued_captures_after_fork();

// Tests only (JITCACHE_TEST_WAIT_FOR_HELPERS=1): the exit flush first waits for this process's
// helpers, so that a test can look at what they did without sleeping.
void wait_for_capture_helpers();

}  // namespace jitcache
