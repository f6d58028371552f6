// core/fd_passing: a message arrives whole with its files, a lock held by a file in flight stays
// held, a closed peer reads as the end, and sending to a gone peer fails without SIGPIPE.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "capture/fd_passing.hpp"

namespace jitcache {
namespace {

struct Pair {
  int fds[2] = {-1, -1};
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0); }
  ~Pair() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
};

TEST(FdPassing, AMessageArrivesWithItsFilesAndTheirLocks) {
  Pair pair;
  char name[] = "/tmp/jitcache-fdpass-XXXXXX";
  const int file = ::mkstemp(name);
  ASSERT_GE(file, 0);
  ASSERT_EQ(::flock(file, LOCK_EX), 0);
  ASSERT_TRUE(send_with_files(pair.fds[0], "job:1", {file}));
  ::close(file);  // only the copy in flight holds the lock now
  const int other = ::open(name, O_RDONLY | O_CLOEXEC);
  EXPECT_NE(::flock(other, LOCK_EX | LOCK_NB), 0) << "the file in flight keeps its lock";
  std::string text;
  std::vector<int> fds;
  ASSERT_EQ(receive_with_files(pair.fds[1], &text, &fds), 1);
  EXPECT_EQ(text, "job:1");
  ASSERT_EQ(fds.size(), 1u);
  EXPECT_NE(::fcntl(fds[0], F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_NE(::flock(other, LOCK_EX | LOCK_NB), 0) << "held by the received copy";
  ::close(fds[0]);
  EXPECT_EQ(::flock(other, LOCK_EX | LOCK_NB), 0);
  ::close(other);
  std::remove(name);
}

TEST(FdPassing, AClosedPeerIsTheEndAndAGoneOneRaisesNoSignal) {
  Pair pair;
  ::close(pair.fds[0]);
  pair.fds[0] = -1;
  std::string text;
  std::vector<int> fds;
  EXPECT_EQ(receive_with_files(pair.fds[1], &text, &fds), 0);
  EXPECT_FALSE(send_with_files(pair.fds[1], "to nobody", {}));  // EPIPE, not SIGPIPE: still running
}

TEST(FdPassing, OversizedOrEmptyMessagesAreNotSent) {
  Pair pair;
  EXPECT_FALSE(send_with_files(pair.fds[0], "", {}));
  EXPECT_FALSE(send_with_files(pair.fds[0], std::string(kMaxMessage + 1, 'x'), {}));
  EXPECT_FALSE(send_with_files(pair.fds[0], "x", {0, 1, 2, 0, 1}));
}

}  // namespace
}  // namespace jitcache
