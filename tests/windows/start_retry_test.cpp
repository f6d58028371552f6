// jitcache-run tries the app's start again only when the new process died before it started
// (ERROR_INTERNAL_ERROR under Wine), and only a bounded number of times.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "shim/windows/start_retry.hpp"

namespace jitcache::windows {
namespace {

// A start that fails with each of `errors` in turn, then succeeds; counts its calls.
struct ScriptedStart {
  std::vector<unsigned long> errors;
  int calls = 0;
  bool operator()(unsigned long* error) {
    if (static_cast<size_t>(calls) < errors.size()) {
      *error = errors[calls++];
      return false;
    }
    ++calls;
    return true;
  }
};

TEST(StartWithRetries, AProcessThatDiedWhileStartingIsStartedAgain) {
  ScriptedStart start{{kStartDiedEarly}};
  unsigned long error = 0;
  EXPECT_TRUE(start_with_retries(std::ref(start), &error));
  EXPECT_EQ(start.calls, 2);
}

TEST(StartWithRetries, OtherFailuresAreFinal) {
  constexpr unsigned long kFileNotFound = 2;
  ScriptedStart start{{kFileNotFound}};
  unsigned long error = 0;
  EXPECT_FALSE(start_with_retries(std::ref(start), &error));
  EXPECT_EQ(error, kFileNotFound);
  EXPECT_EQ(start.calls, 1);
}

TEST(StartWithRetries, GivesUpAfterTheLastAttempt) {
  ScriptedStart start{std::vector<unsigned long>(10, kStartDiedEarly)};
  unsigned long error = 0;
  EXPECT_FALSE(start_with_retries(std::ref(start), &error));
  EXPECT_EQ(error, kStartDiedEarly);
  EXPECT_EQ(start.calls, kStartAttempts);
}

TEST(StartWithRetries, AFirstSuccessStartsOnce) {
  ScriptedStart start;
  unsigned long error = 0;
  EXPECT_TRUE(start_with_retries(std::ref(start), &error));
  EXPECT_EQ(start.calls, 1);
}

}  // namespace
}  // namespace jitcache::windows
