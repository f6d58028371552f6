#include "core/replay_mark.hpp"

#include <chrono>
#include <optional>

namespace jitcache {
namespace {
std::optional<ReplayMark> g_mark;  // set before any build thread starts
}  // namespace

void mark_replay(ReplayMark mark) {
  mark.started_us = monotonic_us();
  g_mark = mark;
}

const ReplayMark* replay_mark() { return g_mark ? &*g_mark : nullptr; }

const ReplayMark* capture_helper_mark() {
  return g_mark && g_mark->purpose == ReplayMark::Purpose::capture_helper ? &*g_mark : nullptr;
}

std::int64_t monotonic_us() {
  // steady_clock is CLOCK_MONOTONIC on Linux (libstdc++), QueryPerformanceCounter on Windows.
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace jitcache
