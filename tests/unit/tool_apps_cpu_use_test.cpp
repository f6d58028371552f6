// Tests for AppsCpuUse (capture/apps_cpu_use.hpp), how a capture helper tells the apps of its
// cache that use the CPU from those that sit idle: real processes holding a real shared flock,
// found through /proc/locks, their CPU time through /proc/<pid>/stat.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>
#include <thread>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "capture/apps_cpu_use.hpp"

namespace jitcache::tool {
namespace {

namespace fs = std::filesystem;

// A child process holding a shared flock on `path`, as an app at work holds apps.running: it
// spins, or sits blocked on a pipe, until it is killed.
class Holder {
 public:
  Holder(const fs::path& path, bool spin) {
    int told[2];
    if (::pipe(told) != 0 || ::pipe(idle_) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::flock(fd, LOCK_SH) != 0) ::_exit(1);
      if (::write(told[1], "h", 1) != 1) ::_exit(1);
      char byte;
      if (!spin) (void)!::read(idle_[0], &byte, 1);
      // A volatile write is a side effect: clang may delete a loop without one (C++ lets it assume
      // every loop ends), and the child then fell through into the parent's code (seen under TSan).
      volatile unsigned long turns = 0;
      for (;;) turns = turns + 1;
    }
    char byte = 0;
    ::close(told[1]);
    holds_ = ::read(told[0], &byte, 1) == 1 && (spin || blocked_within(std::chrono::seconds(10)));
    ::close(told[0]);
  }
  ~Holder() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(idle_[0]);
    ::close(idle_[1]);
  }
  bool holds() const { return holds_; }

 private:
  // The idle child, once it has said it holds the lock, goes to block on its pipe: until it sleeps
  // there (state S in /proc/<pid>/stat) it may still be running.
  bool blocked_within(std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const std::size_t name_end = text.rfind(')');
      if (name_end != std::string::npos && text.compare(name_end + 1, 3, " S ") == 0) return true;
      std::this_thread::yield();
    }
    return false;
  }

  pid_t pid_ = -1;
  int idle_[2] = {-1, -1};
  bool holds_ = false;
};

class AppsCpuUseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/proc/locks", R_OK) != 0) GTEST_SKIP() << "no /proc/locks here";
    char pattern[] = "/tmp/jitcache-apps-cpu-XXXXXX";
    ASSERT_TRUE(::mkdtemp(pattern));
    root_ = pattern;
    lock_ = root_ / "apps.running";
    const int fd = ::open(lock_.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ::close(fd);
    struct stat info {};
    ASSERT_EQ(::stat(lock_.c_str(), &info), 0);
    identity_ = info.st_ino;
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }

  fs::path root_, lock_;
  std::uint64_t identity_ = 0;
};

TEST_F(AppsCpuUseTest, AnAppThatSitsIdleIsNotBusy) {
  Holder idle(lock_, /*spin=*/false);
  ASSERT_TRUE(idle.holds());
  AppsCpuUse apps;
  EXPECT_FALSE(apps.busy(identity_)) << "blocked on a pipe, it uses no CPU";
}

TEST_F(AppsCpuUseTest, AnAppThatUsesTheCpuIsBusyBesideAnIdleOne) {
  Holder idle(lock_, /*spin=*/false);
  Holder spinning(lock_, /*spin=*/true);
  ASSERT_TRUE(idle.holds());
  ASSERT_TRUE(spinning.holds());
  AppsCpuUse apps;
  EXPECT_TRUE(apps.busy(identity_));
}

// Issue 39: the run started as the one before exits builds at once and lasts a few hundred ms; a
// helper at full priority beside no app at work looks every 25 ms whether one has started. A look
// under 200 ms after the last one keeps the last answer, but not for an app that appeared since.
TEST_F(AppsCpuUseTest, AnAppThatStartsBetweenTwoLooksIsBusyAtOnce) {
  Holder idle(lock_, /*spin=*/false);
  ASSERT_TRUE(idle.holds());
  AppsCpuUse apps;
  ASSERT_FALSE(apps.busy(identity_));
  Holder started(lock_, /*spin=*/false);  // new is what counts, until its CPU time is measured
  ASSERT_TRUE(started.holds());
  EXPECT_TRUE(apps.busy(identity_));
  // Measured over a full span, one that uses no CPU is not busy: the answer does not stick.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool went_idle = false;
  while (!went_idle && std::chrono::steady_clock::now() < deadline) {
    went_idle = !apps.busy(identity_);
    if (!went_idle) std::this_thread::sleep_for(std::chrono::milliseconds(25));  // the helper's pace
  }
  EXPECT_TRUE(went_idle);
}

// The helper at full priority with no app at work says so at each look: an app that then starts
// is busy at once, before it used any CPU, not judged by what its threads do at that instant.
TEST_F(AppsCpuUseTest, AnAppThatStartsWhereNoneRanIsBusyAtOnce) {
  AppsCpuUse apps;
  apps.none_at_work();
  Holder started(lock_, /*spin=*/false);
  ASSERT_TRUE(started.holds());
  EXPECT_TRUE(apps.busy(identity_));
}

TEST_F(AppsCpuUseTest, WhatCannotBeToldIsTakenAsBusy) {
  AppsCpuUse apps;
  EXPECT_TRUE(apps.busy(identity_)) << "the store saw an app at work, /proc/locks lists none";
  EXPECT_TRUE(apps.busy(0)) << "no file";
}

}  // namespace
}  // namespace jitcache::tool
