#include "core/single_flight.hpp"

#include <new>

namespace jitcache {

std::optional<FlightOutcome> Flight::wait(std::chrono::milliseconds timeout) {
  ++waiters_;
  std::unique_lock lock(mutex_);
  if (!done_.wait_for(lock, timeout, [this] { return outcome_.has_value(); })) return std::nullopt;
  return outcome_;
}

std::shared_ptr<Flight> FlightTable::join(const Digest128& key, bool* leader) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = flights_.try_emplace(key);
  if (inserted) it->second = std::make_shared<Flight>();
  *leader = inserted;
  return it->second;
}

void FlightTable::finish(const Digest128& key, const std::shared_ptr<Flight>& flight, FlightOutcome outcome) {
  {
    std::lock_guard lock(mutex_);
    auto it = flights_.find(key);
    if (it != flights_.end() && it->second == flight) flights_.erase(it);
  }
  std::lock_guard lock(flight->mutex_);
  if (flight->outcome_) return;
  flight->outcome_ = std::move(outcome);
  flight->done_.notify_all();
}

void FlightTable::reset_after_fork() {
  // The mutexes may have been held by a thread that does not exist here: start over, leaking the
  // old state rather than touching it.
  new (&mutex_) std::mutex;
  new (&flights_) std::map<Digest128, std::shared_ptr<Flight>>;
}

}  // namespace jitcache
