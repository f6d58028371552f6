// Tests for store/off_thread_call: a call blocked in the kernel (here a read from a pipe nobody
// writes, as a read on a hung NFS mount) costs its caller one deadline, and later calls fail at
// once until it returns; then calls run again.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "store/remote/off_thread_call.hpp"

namespace jitcache {
namespace {

using std::chrono::steady_clock;

RemoteResult answered(RemoteStatus status) {
  RemoteResult r;
  r.status = status;
  return r;
}

TEST(OffThreadCall, ACallBlockedInTheKernelIsBoundedByItsDeadline) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  OffThreadCall calls;
  EXPECT_EQ(calls.run(steady_clock::now() + std::chrono::seconds(30), [] { return answered(RemoteStatus::ok); }).status,
            RemoteStatus::ok);

  const int blocked_on = pipe_fds[0];
  RemoteResult hung = calls.run(steady_clock::now() + std::chrono::milliseconds(50), [blocked_on] {
    char byte = 0;
    return ::read(blocked_on, &byte, 1) == 1 ? answered(RemoteStatus::ok) : answered(RemoteStatus::error);
  });
  EXPECT_EQ(hung.status, RemoteStatus::timeout) << hung.reason;

  // The worker is still in the read: the next call does not queue behind it.
  bool ran = false;
  RemoteResult next = calls.run(steady_clock::now() + std::chrono::seconds(30), [&ran] {
    ran = true;
    return answered(RemoteStatus::ok);
  });
  EXPECT_EQ(next.status, RemoteStatus::error) << next.reason;
  EXPECT_NE(next.reason.find("not returned"), std::string::npos) << next.reason;
  EXPECT_FALSE(ran);

  // The mount comes back: the hung read returns, and calls run again.
  ASSERT_EQ(::write(pipe_fds[1], "x", 1), 1);
  RemoteResult again;
  const auto give_up = steady_clock::now() + std::chrono::seconds(60);  // a hang guard only
  do {
    std::this_thread::yield();
    again = calls.run(steady_clock::now() + std::chrono::seconds(30), [] { return answered(RemoteStatus::miss); });
  } while (again.status == RemoteStatus::error && steady_clock::now() < give_up);
  EXPECT_EQ(again.status, RemoteStatus::miss) << again.reason;
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(OffThreadCall, AForkedChildRunsCallsOnAThreadOfItsOwn) {
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
  GTEST_SKIP() << "TSan cannot start threads in the child of a multi-threaded fork (its die_after_fork)";
#endif
#endif
  OffThreadCall calls;
  ASSERT_EQ(calls.run(steady_clock::now() + std::chrono::seconds(30), [] { return answered(RemoteStatus::ok); }).status,
            RemoteStatus::ok);
  const pid_t child = ::fork();
  if (child == 0) {
    RemoteResult in_child =
        calls.run(steady_clock::now() + std::chrono::seconds(30), [] { return answered(RemoteStatus::miss); });
    ::_exit(in_child.status == RemoteStatus::miss ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace jitcache
