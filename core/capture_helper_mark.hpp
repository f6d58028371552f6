// Whether this process is a capture helper building a program for an app (capture = helper,
// core/capture_helper.hpp). Its build is the app's miss captured, not a miss of its own: stats
// count it as "captured_by_helper" and its trace record names the app and when the helper ran.
#pragma once

#include <cstdint>

namespace jitcache {

struct CaptureHelperMark {
  std::int64_t for_pid = 0;      // the app that missed
  std::int64_t started_us = 0;   // monotonic clock (shared by the processes of one machine)
  bool at_exit = false;          // started by the app's exit flush (not while the app ran)
};

// Called once by the helper's child before it builds.
void mark_capture_helper(std::int64_t for_pid, bool at_exit);
// Null unless this process is a capture helper.
const CaptureHelperMark* capture_helper_mark();
// CLOCK_MONOTONIC in microseconds: comparable between processes of one boot.
std::int64_t monotonic_us();

}  // namespace jitcache
