#include "store/remote/remote_gate.hpp"

#include "store/files/file_ops.hpp"

namespace jitcache {

RemoteResult RemoteGate::run(const RemoteConfig& config, const std::function<RemoteResult(const Call&)>& work) {
  using Clock = std::chrono::steady_clock;
  auto skipped = [](std::string reason) {
    RemoteResult r;
    r.status = RemoteStatus::skipped;
    r.reason = std::move(reason);
    return r;
  };
  std::unique_lock lock(mutex_, std::defer_lock);
  if (!lock.try_lock_for(config.connect_timeout + config.command_timeout)) return skipped("connection busy");
  if (disabled_) return skipped("remote off: " + last_failure_);
  const std::uint64_t process = fileops::current_process_id();
  const bool forked = owner_ != 0 && owner_ != process;
  owner_ = process;
  if (Clock::now() < skip_until_) return skipped("backing off after: " + last_failure_);

  // One deadline for the call once it has the connection (the wait for it, above, has the same
  // bound). Counting the lock wait in too would turn a busy connection into a timeout and a
  // back-off of the whole process.
  const Clock::time_point started = Clock::now();
  RemoteResult outcome = work({forked, started + config.connect_timeout,
                               started + config.connect_timeout + config.command_timeout});
  if (outcome.failed()) {
    last_failure_ = std::string(to_string(outcome.status)) + ": " + outcome.reason;
    skip_until_ = Clock::now() + config.backoff;
    disabled_ = outcome.status == RemoteStatus::rejected;
  }
  return outcome;
}

}  // namespace jitcache
