// Whether this process is a replay: a `jitcache replay` child rebuilding a recorded program
// (capture/replay.hpp), for `jitcache warm` or as an app's capture helper (capture/hand_over.hpp).
// One mark for both, set by replay() before anything is built: what a replay builds is stored for
// every later app, so the adapter loads it back before storing it (capture/load_back_check.hpp),
// whichever of the two asked. A capture helper's build is besides the app's miss captured, not a
// miss of its own: stats count it as "captured_by_helper" and its trace record names the app and
// when the helper ran.
#pragma once

#include <cstdint>

namespace jitcache {

struct ReplayMark {
  enum class Purpose { warm, capture_helper };
  Purpose purpose = Purpose::warm;
  std::int64_t for_pid = 0;      // capture helper: the app that missed
  bool at_exit = false;          // capture helper: this build started after its app exited
  bool waited_for = false;       // capture helper: another process waited for it (built at full priority)
  int group_nice = -1;           // capture helper: its scheduling group's nice when it started (-1: none)
  int nice = 0;                  // capture helper: its own nice when it started
  bool in_apps_driver_cache = false;  // capture helper: built in the app's PoCL cache, not a scratch folder
  std::int64_t started_us = 0;   // monotonic clock (shared by the processes of one machine); set by mark_replay
};

// Called once per process, by replay(), before it builds.
void mark_replay(ReplayMark mark);
// Null unless this process is a replay (warm's or a capture helper's).
const ReplayMark* replay_mark();
// Null unless this process is a capture helper (a replay for an app).
const ReplayMark* capture_helper_mark();
// CLOCK_MONOTONIC in microseconds: comparable between processes of one boot.
std::int64_t monotonic_us();

}  // namespace jitcache
