// What every remote client shares around a call (store/remote/redis_remote.hpp, store/remote/http_remote.hpp):
// one call at a time, a bounded wait for that turn, one total deadline per call, back-off after a
// timeout or an error, off for good after a refusal of credentials, and noticing a fork (the
// connection then belongs to the parent process).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "store/remote_api/remote_client.hpp"

namespace jitcache {

class RemoteGate {
 public:
  struct Call {
    bool forked;     // first call in a forked child: drop (never close) the parent's connection
    Deadline connect_deadline;
    Deadline deadline;  // name resolution, connect, request and the whole reply
  };
  // Runs `work` unless the remote is off, backing off, or busy past the call's bound (`skipped`,
  // nothing sent). A failed result starts the back-off; `rejected` turns the remote off.
  RemoteResult run(const RemoteConfig& config, const std::function<RemoteResult(const Call&)>& work);

 private:
  std::timed_mutex mutex_;  // timed: a child forked mid-call inherits it locked; never wait unbounded
  std::uint64_t owner_ = 0;
  std::chrono::steady_clock::time_point skip_until_{};
  std::string last_failure_;
  bool disabled_ = false;
};

}  // namespace jitcache
