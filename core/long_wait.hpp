// Waits that may be long are bounded by a documented setting and never silent: the first second
// is quiet, then one line on stderr per kind of wait per process says what is awaited, for how
// long at most, and which setting bounds it (docs/concurrency.md, "Every wait and its bound").
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace jitcache {

enum class WaitKind { other_builder, remote_lease, stats_lock, exit_flush, count_ };

struct WaitNotice {
  WaitKind kind;
  std::string what;     // "another thread or process building the same program"
  const char* setting;  // the environment variable that bounds it, e.g. "JITCACHE_WAIT_MS"
};

// How long a wait stays quiet before it is announced.
inline constexpr std::chrono::milliseconds kQuietWait{1000};

// Prints the notice (once per kind per process) now: for poll loops that measure time themselves.
void announce_wait(const WaitNotice& notice, std::chrono::milliseconds bound);

// Runs `attempt(wait)` with the first kQuietWait of `bound`, and when it returns false (not done
// yet) and more of the bound is left, announces, then runs it once more with the rest. Returns
// what the last attempt returned.
bool wait_announced(const WaitNotice& notice, std::chrono::milliseconds bound,
                    const std::function<bool(std::chrono::milliseconds)>& attempt);

}  // namespace jitcache
