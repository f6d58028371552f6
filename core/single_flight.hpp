// In-process single-flight (the SYCL getOrBuild pattern): the first thread to ask for a key leads
// its build; threads asking for the same key meanwhile wait for the leader's outcome instead of
// building too. An outcome is not cached: once published the flight is gone, and the next
// request for the key starts a new one (the memory and disk tiers remember results).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"

namespace jitcache {

struct FlightOutcome {
  enum class Kind {
    built,      // the leader has a binary: `binary` holds it
    failed,     // the real build failed: waiters get the same error
    abandoned,  // the leader gave up for another reason (no binary, an exception): retry
  };
  Kind kind = Kind::abandoned;
  std::shared_ptr<const std::string> binary;
  std::uint64_t compile_us = 0;
  std::string reason;
  std::shared_ptr<const std::string> answers;  // the build's recorded answers, JSON text (null: none)
};

class Flight {
 public:
  // Blocks until the leader publishes, or `timeout` passes (nullopt).
  std::optional<FlightOutcome> wait(std::chrono::milliseconds timeout);
  // Whether a thread has waited (or waits) for this flight's outcome.
  bool awaited() const { return waiters_.load() > 0; }

 private:
  friend class FlightTable;
  std::atomic<int> waiters_{0};
  std::mutex mutex_;
  std::condition_variable done_;
  std::optional<FlightOutcome> outcome_;
};

class FlightTable {
 public:
  // The flight under way for `key`, or a new one that the caller leads (`*leader` = true).
  std::shared_ptr<Flight> join(const Digest128& key, bool* leader);
  // The leader's outcome: wakes every waiter and forgets the flight. Only the first call counts.
  void finish(const Digest128& key, const std::shared_ptr<Flight>& flight, FlightOutcome outcome);
  // A forked child has none of its parent's threads: no flight there will ever finish.
  void reset_after_fork();

 private:
  std::mutex mutex_;
  std::map<Digest128, std::shared_ptr<Flight>> flights_;
};

}  // namespace jitcache
