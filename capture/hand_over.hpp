// The app's side of the capture helper (capture = helper, docs/settings.md "capture"): after a
// missed build the app's process reads no binary. A detached, low-priority `jitcache replay
// --helper` process (setsid, nice, a time limit per program, not under the shim; its code is
// capture/helper_process.hpp) rebuilds the recorded inputs, checks that the key it derives is the
// app's, and stores the entry through the same adapter and engine (capture/replay.hpp).
//
// One helper per app, started at its first hand-over (helper_start = one_at_a_time) or at its exit
// (at_exit), fed over a socket for as long as the app runs: its worker keeps the driver loaded, so
// a program costs the helper about what it cost the app. Each job carries the key's capture marker
// (DiskStore::mark_capture: the capture is in flight until the helper lets it go) and, when the app
// still holds it, the key's build lock. The helper holds a key's build lock only while it builds
// that key: a key it has not started is nobody's, and a process that wants it builds it itself
// (DESIGN.md: a waiter never waits for work nobody has started). docs/concurrency.md has the rest.
#pragma once

#include <string>
#include <sys/types.h>

#include "core/capture_seam.hpp"

namespace jitcache {

struct HelperPolicy {
  unsigned time_limit_s = 600;  // per program
  bool while_running = true;    // false: the helper starts when the app exits
};

// The `jitcache` binary the helper runs: JITCACHE_HELPER when set, else found next to the shim
// (<prefix>/bin next to <prefix>/lib/<arch>, or the build tree's tools/). Empty when none is.
std::string helper_binary();

// Hands `job` to this process's helper, starting it when none runs (and the policy allows it; else
// the job waits in this process for the exit). Returns the helper's pid, 0 when kept for the exit,
// or -1 with `why` set (the job's marker and lock are released then).
pid_t submit_capture(CaptureJob job, const HelperPolicy& policy, std::string* why);
// Before a build that will likely be handed over: starts the helper now (once per process, when
// the policy lets one run while the app runs), so that it loads the driver for the device whose
// key component digest is `device_digest` while the app builds.
void prestart_capture_helper(const std::string& device_digest, const HelperPolicy& policy);

// At exit: hands the jobs kept for it to a helper and the helper its ending marker
// (DiskStore::mark_helper_ending), then closes this process's end of the socket, which tells the
// helper that no more will come (it finishes what it has, then ends).
void finish_captures_at_exit(DiskStore& store);

// A forked child must not feed its parent's helper: it closes its copy of the socket (the helper
// ends when the parent closes its own) and drops the jobs the parent kept (the parent's copies of
// their markers stay held).
void forget_captures_after_fork();

// Tests only (JITCACHE_TEST_WAIT_FOR_HELPERS=1): the exit flush first waits for this process's
// helper to end, so that a test can look at what it did without sleeping.
void wait_for_capture_helpers();

}  // namespace jitcache
