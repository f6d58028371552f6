// Issue 39: a waiter stops waiting for a capture helper whose worker, at the pace measured after
// the grace, would need more than twice what is left of the wait's bound (capture/helper_pace.hpp).
// Readings are given here, as the engine takes them from /proc.
#include "capture/helper_pace.hpp"

#include <chrono>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/platform.hpp"

namespace jitcache {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

const auto kStart = std::chrono::steady_clock::time_point() + std::chrono::hours(1);

TEST(HelperPaceTest, AWorkerThatGetsNoCpuIsNotWaitedForPastTheGraceAndOneMeasure) {
  HelperPace pace(milliseconds(2000), milliseconds(500), kStart, milliseconds(4000));
  EXPECT_TRUE(pace.worth_waiting(kStart + milliseconds(50), milliseconds(500))) << "within the grace";
  EXPECT_TRUE(pace.worth_waiting(kStart + HelperPace::kGrace, milliseconds(500))) << "the first reading after it";
  EXPECT_TRUE(pace.worth_waiting(kStart + HelperPace::kGrace + HelperPace::kLook, milliseconds(500)))
      << "a span shorter than kMeasure says nothing yet";
  EXPECT_FALSE(pace.worth_waiting(kStart + HelperPace::kGrace + HelperPace::kMeasure, milliseconds(500)));
  EXPECT_EQ(pace.share(), 0.0);
}

TEST(HelperPaceTest, AWorkerAtAFullCpuIsWaitedFor) {
  HelperPace pace(milliseconds(2000), milliseconds(0), kStart, milliseconds(4000));
  ASSERT_TRUE(pace.worth_waiting(kStart + HelperPace::kGrace, milliseconds(100)));
  for (int look = 1; look <= 20; ++look) {
    const auto at = HelperPace::kGrace + look * HelperPace::kLook;
    EXPECT_TRUE(pace.worth_waiting(kStart + at, milliseconds(100) + look * HelperPace::kLook)) << look;
  }
  EXPECT_DOUBLE_EQ(pace.share(), 1.0);
}

// What is left of the job (1.3 builds, less what the worker used on it) at the pace decides,
// against twice what is left of the bound (here two builds).
TEST(HelperPaceTest, ASlowWorkerNearlyDoneIsWaitedForAndOneFarFromItIsNot) {
  const auto slow = [](microseconds done_at_start) {
    HelperPace pace(milliseconds(1000), milliseconds(0), kStart, milliseconds(2000));
    (void)pace.worth_waiting(kStart + HelperPace::kGrace, done_at_start);
    // A quarter of a CPU: 25 ms of CPU per 100 ms.
    return pace.worth_waiting(kStart + HelperPace::kGrace + milliseconds(400), done_at_start + milliseconds(100));
  };
  EXPECT_TRUE(slow(milliseconds(1000))) << "0.2 s of CPU left: 0.8 s at that pace, against 2 x 1.5 s";
  EXPECT_FALSE(slow(milliseconds(0))) << "1.2 s left: 4.8 s at that pace";
}

// A busy machine slows the waiter's own build as much as the helper: a worker at half a CPU that
// can finish within the bound (0.8 s of CPU left: 1.6 s, of 2 s) is waited for all along.
TEST(HelperPaceTest, AWorkerAtHalfACpuThatCanFinishIsWaitedFor) {
  HelperPace pace(milliseconds(1000), milliseconds(0), kStart, milliseconds(2000));
  ASSERT_TRUE(pace.worth_waiting(kStart + HelperPace::kGrace, milliseconds(550)));
  for (int look = 2; look <= 18; ++look) {
    const auto at = HelperPace::kGrace + look * HelperPace::kLook;
    EXPECT_TRUE(pace.worth_waiting(kStart + at, milliseconds(550) + look * HelperPace::kLook / 2)) << look;
  }
}

TEST(HelperPaceTest, AnotherProcessUnderTheWorkersPidReadsAsNoProgress) {
  HelperPace pace(milliseconds(1000), milliseconds(90000), kStart, milliseconds(2000));
  ASSERT_TRUE(pace.worth_waiting(kStart + HelperPace::kGrace, milliseconds(300)));
  EXPECT_FALSE(pace.worth_waiting(kStart + HelperPace::kGrace + HelperPace::kMeasure, milliseconds(200)));
}

// Against getrusage, this process's own account of its CPU time, after it spun a while.
TEST(ProcessCpuTimeTest, ReadsWhatTheProcessUsedAndNothingForNoProcess) {
  volatile unsigned sink = 0;
  const auto until = std::chrono::steady_clock::now() + milliseconds(300);
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
  const auto read = platform::process_cpu_time(static_cast<long>(::getpid()));
  rusage own{};
  ASSERT_EQ(::getrusage(RUSAGE_SELF, &own), 0);
  const auto used = std::chrono::seconds(own.ru_utime.tv_sec + own.ru_stime.tv_sec) +
                    microseconds(own.ru_utime.tv_usec + own.ru_stime.tv_usec);
  ASSERT_TRUE(read);
  EXPECT_GT(read->count(), 0);
  EXPECT_LE(*read, used + milliseconds(20)) << "clock ticks: 10 ms each, a few apart at most";
  EXPECT_GE(*read, used - milliseconds(50));
  EXPECT_FALSE(platform::process_cpu_time(0));
  EXPECT_FALSE(platform::process_cpu_time(-1));
  EXPECT_FALSE(platform::process_cpu_time(1 << 23)) << "over any pid Linux hands out";
}

}  // namespace
}  // namespace jitcache
