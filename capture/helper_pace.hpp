// Whether waiting for a capture helper's build under way can still pay. A wait is
// bounded by what a build here costs (capture/helper_wait.hpp), but a helper that gets
// a few percent of a CPU (behind busy work, or where its priority cannot rise above others': a
// cgroup of its own, where group nice values do nothing) fills that bound, and the waiter then
// builds anyway: up to three builds' time for one. So, once the helper has had time to see the
// waiter and move to full priority (kGrace), the waiter reads its worker's CPU time every kLook
// and, once it has measured kMeasure (clock ticks are 10 ms; a worker may wait a moment on its
// linker or the disk), stops waiting as soon as the helper, at the pace measured since, would need
// more than twice what is left of the bound to finish: a helper that is merely slowed (a busy
// machine slows the waiter's own build as much) is still waited for.
#pragma once

#include <chrono>
#include <optional>

namespace jitcache {

class HelperPace {
 public:
  // The helper looks for waiters every 25 ms (capture/helper_process.cpp), then needs a
  // moment of CPU; the pace is measured from here on.
  static constexpr std::chrono::milliseconds kGrace{100};
  static constexpr std::chrono::milliseconds kLook{100};
  static constexpr std::chrono::milliseconds kMeasure{200};

  // `build_time`: the app's own build of the key; `worker_cpu_at_start`: the worker's CPU time when
  // it started the key; `waiting_since` and `bound`: this wait's start and bound.
  HelperPace(std::chrono::microseconds build_time, std::chrono::microseconds worker_cpu_at_start,
             std::chrono::steady_clock::time_point waiting_since, std::chrono::milliseconds bound);

  // One reading of the worker's CPU time at `now`. False once waiting no longer pays.
  bool worth_waiting(std::chrono::steady_clock::time_point now, std::chrono::microseconds worker_cpu);

  // The worker's share of one CPU over the span measured so far (for the trace).
  double share() const { return share_; }

 private:
  struct Reading {
    std::chrono::steady_clock::time_point at;
    std::chrono::microseconds cpu;
  };
  std::chrono::microseconds build_time_;
  std::chrono::microseconds worker_cpu_at_start_;
  std::chrono::steady_clock::time_point waiting_since_;
  std::chrono::milliseconds bound_;
  std::optional<Reading> base_;
  double share_ = 1.0;
};

}  // namespace jitcache
