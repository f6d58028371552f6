// The capture helper as the engine sees it (core/capture_seam.hpp): hand-overs go to this
// process's helper (capture/hand_over.hpp), waits for a key in flight follow
// capture/helper_wait.hpp. A program links it in once, at its start: the shim when it loads
// (shim/linux/preload_capture.cpp), the `jitcache` tool in main.
#pragma once

#include "core/capture_seam.hpp"

namespace jitcache {

CaptureSeam& capture_helper_seam();

}  // namespace jitcache
