// capture = helper (docs/settings.md, "capture"): after a missed build the app's process reads no
// binary. A detached, low-priority `jitcache replay` process (setsid, nice, its own time limit,
// not under the shim) rebuilds the recorded inputs, checks that the key it derives is the app's,
// and stores the entry through the same adapter and engine (shim/opencl/replay.hpp).
#pragma once

#include <string>
#include <sys/types.h>

namespace jitcache {

struct HelperRequest {
  std::string inputs;         // the recorded inputs' digest
  std::string device_digest;  // the key's device component digest
  std::string key;            // the app's key: the helper stores nothing under any other
  unsigned time_limit_s = 600;
};

// The `jitcache` binary the helper runs: JITCACHE_HELPER when set, else found next to the shim
// (<prefix>/bin next to <prefix>/lib/<arch>, or the build tree's tools/). Empty when none is.
std::string helper_binary();

// Starts the helper detached; a thread of this process reaps it and counts a helper that was killed
// ("capture_helper_died": a driver crash, its time limit). Returns its pid, or -1 with `why` set.
pid_t start_capture_helper(const HelperRequest& request, std::string* why);

// Tests only (JITCACHE_TEST_WAIT_FOR_HELPERS=1): the exit flush first waits for this process's
// helpers, so that a test can look at what they did without sleeping.
void wait_for_capture_helpers();

}  // namespace jitcache
