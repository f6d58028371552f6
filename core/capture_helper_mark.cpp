#include "core/capture_helper_mark.hpp"

#include <chrono>
#include <optional>

namespace jitcache {
namespace {
std::optional<CaptureHelperMark> g_mark;  // set before any build thread starts
}  // namespace

void mark_capture_helper(std::int64_t for_pid, bool at_exit) {
  g_mark = CaptureHelperMark{for_pid, monotonic_us(), at_exit};
}

const CaptureHelperMark* capture_helper_mark() { return g_mark ? &*g_mark : nullptr; }

std::int64_t monotonic_us() {
  // steady_clock is CLOCK_MONOTONIC on Linux (libstdc++), QueryPerformanceCounter on Windows.
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace jitcache
