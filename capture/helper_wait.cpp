#include "capture/helper_wait.hpp"

#include <algorithm>
#include <atomic>
#include <optional>

#include "capture/helper_pace.hpp"
#include "core/log.hpp"
#include "core/platform.hpp"

namespace jitcache {
namespace {

// What this process may still wait for capture helpers, all keys together (JITCACHE_WAIT_MS).
std::atomic<std::int64_t>& wait_left_us(const Settings& settings) {
  static std::atomic<std::int64_t> left{static_cast<std::int64_t>(settings.wait_ms) * 1000};
  return left;
}

class HelperWait final : public CaptureWait {
 public:
  HelperWait(DiskStore& store, const Digest128& key, const Settings& settings, bool may_wait_for_captures)
      : store_(store), key_(key), settings_(settings) {
    if (!may_wait_for_captures) {  // its helper may be busy with it, or with others before it: rebuilding is cheaper
      built_here_ = "built here: its capture was still in flight (the driver's own cache rebuilds it cheaply)";
      return;
    }
    std::string why_not;
    progress_ = store_.capture_progress(key_);
    bound_ = wait_bound(&why_not);
    if (bound_.count() == 0) {
      built_here_ = "built here: " + why_not;
      return;
    }
    if (progress_.build_time && progress_.worker) {
      pace_.emplace(*progress_.build_time, progress_.worker->cpu, std::chrono::steady_clock::now(), bound_);
    }
  }

  std::chrono::milliseconds bound() const override { return bound_; }
  std::string built_here() const override { return built_here_; }

  std::error_code lock(std::chrono::milliseconds step, KeyLock* lock, bool* no_use) override {
    if (!pace_) return store_.lock_key(key_, step, lock);
    return lock_while_helper_keeps_pace(step, lock, no_use);
  }

  void waited(std::uint64_t waited_us) override { wait_left_us(settings_) -= static_cast<std::int64_t>(waited_us); }

  std::string gave_up(std::uint64_t waited_us) override {
    store_.stop_wanting(key_);  // this process builds the key now: the helper goes back behind it
    if (lags_) {
      const std::string reason = "built here: its capture helper's worker got " +
                                 std::to_string(static_cast<int>(pace_->share() * 100 + 0.5)) +
                                 " % of a CPU, too little to finish within this wait's bound";
      log_info("stopped waiting for the capture helper building " + key_.hex() + " after " +
               std::to_string(waited_us / 1000) + " ms: " + reason.substr(12));
      return reason;
    }
    log_warning("gave up waiting for the capture helper building " + key_.hex() + " after " +
                std::to_string(bound_.count()) +
                " ms (as long as building it here takes; JITCACHE_WAIT_MS bounds all such waits): building here");
    return "built here: gave up waiting for its capture helper after " + std::to_string(bound_.count()) +
           " ms (as long as building it here takes)";
  }

 private:
  // The key's marker says what the app's own build of it took and whether the helper has started
  // it: a key the helper has not started is built here at once (waiting would cost the helper's
  // whole job, more than this build: docs/benchmarks.md); the helper puts it behind its other
  // jobs while this process holds its build lock. One under way is waited for at most as long as
  // building it here would take: twice the app's build time, because a build here also
  // pays the code generation of its kernels at their first enqueue (PoCL generates code lazily),
  // which a hit skips and the app's clBuildProgram time does not count; the helper's job (compile,
  // code generation for the binary, load-back) costs a little more than the app's build
  // (docs/benchmarks.md). (Not "what is left of it by the clock": a helper that ran behind its app
  // started long ago and is not nearly done.) All such waits of one process share JITCACHE_WAIT_MS,
  // so a run behind a starved helper is slowed by that much at most, not by that much per program.
  // A marker that says nothing (another user's) leaves JITCACHE_WAIT_MS.
  std::chrono::milliseconds wait_bound(std::string* why_not) const {
    const std::int64_t left_us = std::max<std::int64_t>(wait_left_us(settings_).load(), 0);
    std::int64_t bound_us = std::min<std::int64_t>(left_us, static_cast<std::int64_t>(settings_.wait_ms) * 1000);
    *why_not = "this process waited JITCACHE_WAIT_MS for capture helpers already";
    if (progress_.build_time) {
      if (!progress_.started_ns) {
        *why_not = "its capture helper had not started it (waiting would cost more than building it)";
        return std::chrono::milliseconds(0);
      }
      bound_us = std::min<std::int64_t>(bound_us, 2 * progress_.build_time->count());
    }
    return std::chrono::milliseconds((bound_us + 999) / 1000);
  }

  // Waits up to `bound` for the key's build lock, in steps of HelperPace::kLook, each followed by a
  // reading of the helper worker's CPU time; stops early (`*no_use`) once waiting no longer pays. A
  // worker whose CPU time cannot be read (gone: its helper lets the key go soon) leaves the bound.
  std::error_code lock_while_helper_keeps_pace(std::chrono::milliseconds bound, KeyLock* lock, bool* no_use) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      const std::error_code error = store_.lock_key(
          key_, std::clamp(left, std::chrono::milliseconds(0), std::chrono::milliseconds(HelperPace::kLook)), lock);
      if (error != std::errc::resource_unavailable_try_again || left <= HelperPace::kLook) return error;
      const std::optional<std::chrono::microseconds> cpu = platform::process_cpu_time(progress_.worker->pid);
      if (cpu && !pace_->worth_waiting(std::chrono::steady_clock::now(), *cpu)) {
        *no_use = lags_ = true;
        return error;
      }
    }
  }

  DiskStore& store_;
  const Digest128 key_;
  const Settings& settings_;
  DiskStore::CaptureProgress progress_;
  std::chrono::milliseconds bound_{0};
  std::string built_here_;
  std::optional<HelperPace> pace_;
  bool lags_ = false;
};

}  // namespace

std::unique_ptr<CaptureWait> wait_for_helper(DiskStore& store, const Digest128& key, const Settings& settings,
                                             bool may_wait_for_captures) {
  return std::make_unique<HelperWait>(store, key, settings, may_wait_for_captures);
}

}  // namespace jitcache
