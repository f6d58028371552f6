#include "core/replay_mark.hpp"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string_view>

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

void break_binary_for_tests(std::string& binary) {
  if (!replay_mark()) return;
  const char* breaks = std::getenv("JITCACHE_TEST_REPLAY_BREAKS_BINARY");
  if (!breaks || std::string_view(breaks) != "1") return;
  for (std::size_t i = 0; i < binary.size() && i < 16; ++i) binary[i] = static_cast<char>(~binary[i]);
}

std::int64_t monotonic_us() {
  // steady_clock is CLOCK_MONOTONIC on Linux (libstdc++), QueryPerformanceCounter on Windows.
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace jitcache
