#include "capture/helper_pace.hpp"

#include <algorithm>

namespace jitcache {
namespace {

// The helper's whole job (the compile, the code generation for the binary, the load-back) per
// app's own build of the key, as measured on idle PoCL (docs/benchmarks.md).
constexpr double kJobPerBuild = 1.3;
// Given up only when the helper would need more than this many times what is left of the bound:
// the job's estimate is the idle machine's, and a loaded machine stretches the app's build time
// (the estimate's base) as much as the helper's work.
constexpr double kClearlyTooSlow = 2.0;

}  // namespace

HelperPace::HelperPace(std::chrono::microseconds build_time, std::chrono::microseconds worker_cpu_at_start,
                       std::chrono::steady_clock::time_point waiting_since, std::chrono::milliseconds bound)
    : build_time_(build_time), worker_cpu_at_start_(worker_cpu_at_start), waiting_since_(waiting_since),
      bound_(bound) {}

bool HelperPace::worth_waiting(std::chrono::steady_clock::time_point now, std::chrono::microseconds worker_cpu) {
  if (now - waiting_since_ < kGrace) return true;
  if (!base_) {
    base_ = Reading{now, worker_cpu};
    return true;
  }
  const auto span = std::chrono::duration_cast<std::chrono::microseconds>(now - base_->at);
  if (span < kMeasure) return true;
  // Another process under that pid (the worker gone, its pid taken) reads as no progress.
  share_ = std::max<double>(0.0, static_cast<double>((worker_cpu - base_->cpu).count())) /
           static_cast<double>(span.count());
  const double build = static_cast<double>(build_time_.count());
  const double done = std::max<double>(0.0, static_cast<double>((worker_cpu - worker_cpu_at_start_).count()));
  // A job past its estimate is taken to be nearly done, not done: a tenth of a build is left.
  const double left = std::max(kJobPerBuild * build - done, build / 10);
  const double bound_left = static_cast<double>(
      std::chrono::duration_cast<std::chrono::microseconds>(waiting_since_ + bound_ - now).count());
  return bound_left <= 0 || left <= share_ * kClearlyTooSlow * bound_left;
}

}  // namespace jitcache
