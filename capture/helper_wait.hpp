// How long a lookup waits for a key that a capture helper is building, and how it waits
// (CaptureWait, core/capture_seam.hpp). A wait is worth no more than the build it saves: a key
// still queued behind the helper's current build is built at once, one under way is waited for at
// most as long as building it would take, and the wait stops early once the helper's worker, at
// the pace it gets the CPU, could not finish in time (capture/helper_pace.hpp). All such waits of
// one process share JITCACHE_WAIT_MS.
#pragma once

#include <memory>

#include "core/capture_seam.hpp"

namespace jitcache {

// The wait for `key`, whose capture is in flight in `store`.
std::unique_ptr<CaptureWait> wait_for_helper(DiskStore& store, const Digest128& key, const Settings& settings,
                                             bool may_wait_for_captures);

}  // namespace jitcache
