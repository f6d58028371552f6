// Tests for core/FlightTable: one leader per key, waiters get the leader's outcome (result or
// error), a leader that gives up lets a waiter lead, and outcomes are not cached.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>
#include <vector>

#include "core/single_flight.hpp"

namespace jitcache {
namespace {

constexpr auto kLong = std::chrono::minutes(1);
const Digest128 kKey{1, 2};

// Starts `count` threads that join kKey's flight (none may lead: the caller already does) and
// then wait; `joined` counts down once every one of them holds the flight.
std::vector<std::thread> start_waiters(FlightTable& table, int count, std::latch& joined,
                                       std::vector<std::optional<FlightOutcome>>& outcomes) {
  outcomes.resize(static_cast<std::size_t>(count));
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      bool leader = true;
      std::shared_ptr<Flight> flight = table.join(kKey, &leader);
      EXPECT_FALSE(leader);
      joined.count_down();
      outcomes[static_cast<std::size_t>(i)] = flight->wait(kLong);
    });
  }
  return threads;
}

TEST(SingleFlight, WaitersGetTheLeadersBinary) {
  FlightTable table;
  bool leader = false;
  std::shared_ptr<Flight> flight = table.join(kKey, &leader);
  ASSERT_TRUE(leader);
  std::latch joined(8);
  std::vector<std::optional<FlightOutcome>> outcomes;
  std::vector<std::thread> waiters = start_waiters(table, 8, joined, outcomes);
  joined.wait();
  auto binary = std::make_shared<const std::string>("the binary");
  table.finish(kKey, flight, {FlightOutcome::Kind::built, binary, 1234, "", nullptr});
  for (auto& t : waiters) t.join();
  for (const auto& outcome : outcomes) {
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->kind, FlightOutcome::Kind::built);
    EXPECT_EQ(outcome->binary, binary);  // the same bytes, not a copy
    EXPECT_EQ(outcome->compile_us, 1234u);
  }
}

TEST(SingleFlight, WaitersGetTheSameErrorAndTheFailureIsNotCached) {
  FlightTable table;
  bool leader = false;
  std::shared_ptr<Flight> flight = table.join(kKey, &leader);
  std::latch joined(4);
  std::vector<std::optional<FlightOutcome>> outcomes;
  std::vector<std::thread> waiters = start_waiters(table, 4, joined, outcomes);
  joined.wait();
  table.finish(kKey, flight, {FlightOutcome::Kind::failed, nullptr, 0, "error: expected ';'", nullptr});
  for (auto& t : waiters) t.join();
  for (const auto& outcome : outcomes) {
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->kind, FlightOutcome::Kind::failed);
    EXPECT_EQ(outcome->reason, "error: expected ';'");
  }
  table.join(kKey, &leader);  // the next request builds again
  EXPECT_TRUE(leader);
}

TEST(SingleFlight, WhenTheLeaderGivesUpExactlyOneWaiterLeadsTheRetry) {
  FlightTable table;
  bool leader = false;
  std::shared_ptr<Flight> flight = table.join(kKey, &leader);
  constexpr int kWaiters = 6;
  std::latch joined(kWaiters);
  std::atomic<int> new_leaders{0}, got_result{0};
  std::shared_ptr<Flight> retry;
  std::vector<std::thread> threads;
  for (int i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&] {
      bool leads = true;
      std::shared_ptr<Flight> first = table.join(kKey, &leads);
      joined.count_down();
      std::optional<FlightOutcome> outcome = first->wait(kLong);
      ASSERT_TRUE(outcome);
      ASSERT_EQ(outcome->kind, FlightOutcome::Kind::abandoned);
      std::shared_ptr<Flight> second = table.join(kKey, &leads);  // as the engine retries
      if (leads) {
        ++new_leaders;
        table.finish(kKey, second, {FlightOutcome::Kind::built, std::make_shared<const std::string>("x"), 1, "", nullptr});
      } else if (second->wait(kLong)->kind == FlightOutcome::Kind::built) {
        ++got_result;
      }
    });
  }
  joined.wait();
  table.finish(kKey, flight, {FlightOutcome::Kind::abandoned, nullptr, 0, "driver returned no binary", nullptr});
  for (auto& t : threads) t.join();
  // Late threads may find the retry finished and lead a third flight; none ever builds alongside.
  EXPECT_GE(new_leaders.load(), 1);
  EXPECT_EQ(new_leaders.load() + got_result.load(), kWaiters);
}

TEST(SingleFlight, OnlyTheFirstOutcomeCountsAndAWaitCanTimeOut) {
  FlightTable table;
  bool leader = false;
  std::shared_ptr<Flight> flight = table.join(kKey, &leader);
  EXPECT_FALSE(flight->wait(std::chrono::milliseconds(1)));
  table.finish(kKey, flight, {FlightOutcome::Kind::failed, nullptr, 0, "first", nullptr});
  table.finish(kKey, flight, {FlightOutcome::Kind::abandoned, nullptr, 0, "second", nullptr});
  EXPECT_EQ(flight->wait(kLong)->reason, "first");
}

}  // namespace
}  // namespace jitcache
