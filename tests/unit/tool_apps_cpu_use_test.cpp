// Tests for AppsCpuUse (capture/apps_cpu_use.hpp), how a capture helper tells the apps of its
// cache that use the CPU from those that sit idle: real processes announced to a real store
// (DiskStore::apps_at_work names them), their CPU time through /proc/<pid>/stat.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "../child_processes.hpp"
#include "capture/apps_cpu_use.hpp"
#include "store/files/file_ops.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache::tool {
namespace {

namespace fs = std::filesystem;
using testing::ChildProcess;
using testing::first_cpu;
using testing::hoard_locks;
using testing::pin_to;

// A volatile write is a side effect: clang may delete a loop without one (C++ lets it assume every
// loop ends).
[[noreturn]] void spin_for_ever() {
  volatile unsigned long turns = 0;
  for (;;) turns = turns + 1;
}

// A child process that announces itself as an app at work on the store at `root` (on CPU `cpu`,
// when given): it spins (at `nice`), or sits blocked, until it is killed.
class Holder {
 public:
  Holder(const fs::path& root, bool spin, int cpu = -1, int nice = 0)
      : child_([&](const ChildProcess& child) {
          pin_to(cpu);
          std::unique_ptr<DiskStore> store = DiskStore::open(root, StoreLimits{}, nullptr);
          if (!store) return;
          store->announce_app();
          child.ready();
          if (!spin) child.wait_for_end();
          (void)::setpriority(PRIO_PROCESS, 0, nice);
          spin_for_ever();
        }) {
    holds_ = child_.started() && (spin || blocked_within(std::chrono::seconds(10)));
  }
  bool holds() const { return holds_; }
  std::int64_t pid() const { return child_.pid(); }

 private:
  // The idle child, once it has said it holds the lock, goes to block on its pipe: until it sleeps
  // there (state S in /proc/<pid>/stat) it may still be running.
  bool blocked_within(std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream stat("/proc/" + std::to_string(child_.pid()) + "/stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const std::size_t name_end = text.rfind(')');
      if (name_end != std::string::npos && text.compare(name_end + 1, 3, " S ") == 0) return true;
      std::this_thread::yield();
    }
    return false;
  }

  ChildProcess child_;
  bool holds_ = false;
};

class AppsCpuUseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/jitcache-apps-cpu-XXXXXX";
    ASSERT_TRUE(::mkdtemp(pattern));
    root_ = pattern;
    store_ = DiskStore::open(root_ / "cache", StoreLimits{}, nullptr);
    ASSERT_TRUE(store_);
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }
  fs::path cache() const { return root_ / "cache"; }
  std::vector<std::int64_t> at_work() const { return store_->apps_at_work(); }

  fs::path root_;
  std::unique_ptr<DiskStore> store_;
};

TEST_F(AppsCpuUseTest, AnAppThatSitsIdleIsNotBusy) {
  Holder idle(cache(), /*spin=*/false);
  ASSERT_TRUE(idle.holds());
  AppsCpuUse apps;
  EXPECT_FALSE(apps.busy(at_work())) << "blocked on a pipe, it uses no CPU";
}

TEST_F(AppsCpuUseTest, AnAppThatUsesTheCpuIsBusyBesideAnIdleOne) {
  Holder idle(cache(), /*spin=*/false);
  Holder spinning(cache(), /*spin=*/true);
  ASSERT_TRUE(idle.holds());
  ASSERT_TRUE(spinning.holds());
  AppsCpuUse apps;
  EXPECT_TRUE(apps.busy(at_work()));
}

// Issue 39: the run started as the one before exits builds at once and lasts a few hundred ms; a
// helper at full priority beside no app at work looks every 25 ms whether one has started. A look
// under 200 ms after the last one keeps the last answer, but not for an app that appeared since.
TEST_F(AppsCpuUseTest, AnAppThatStartsBetweenTwoLooksIsBusyAtOnce) {
  Holder idle(cache(), /*spin=*/false);
  ASSERT_TRUE(idle.holds());
  AppsCpuUse apps;
  ASSERT_FALSE(apps.busy(at_work()));
  Holder started(cache(), /*spin=*/false);  // new is what counts, until its CPU time is measured
  ASSERT_TRUE(started.holds());
  EXPECT_TRUE(apps.busy(at_work()));
  // Measured over a full span, one that uses no CPU is not busy: the answer does not stick.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool went_idle = false;
  while (!went_idle && std::chrono::steady_clock::now() < deadline) {
    went_idle = !apps.busy(at_work());
    if (!went_idle) std::this_thread::sleep_for(std::chrono::milliseconds(25));  // the helper's pace
  }
  EXPECT_TRUE(went_idle);
}

// On a machine busy with other work an app that spins may get well under a tenth of a CPU: here at
// nice 19 beside two spinning processes on its CPU, about 1 %. It wants the CPU all the time (it
// waits for it, runnable), so it is busy at every look. Judged by the CPU it got, it was idle at
// most looks, and the helper went to full priority beside it (seen in a suite run beside BUSY=4).
TEST_F(AppsCpuUseTest, AnAppStarvedOfTheCpuByOtherWorkIsBusy) {
  const int cpu = first_cpu();
  const auto spinner = [cpu](const ChildProcess& child) {
    pin_to(cpu);
    child.ready();
    spin_for_ever();
  };
  ChildProcess other_work(spinner), more_work(spinner);
  ASSERT_TRUE(other_work.started());
  ASSERT_TRUE(more_work.started());
  Holder starved(cache(), /*spin=*/true, cpu, /*nice=*/19);
  ASSERT_TRUE(starved.holds());
  AppsCpuUse apps;
  int looks = 0, busy = 0;
  for (const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
       std::chrono::steady_clock::now() < end;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // the helper's pace between full looks
    ++looks;
    busy += apps.busy(at_work()) ? 1 : 0;
  }
  EXPECT_EQ(busy, looks);
}

// The helper at full priority with no app at work says so at each look: an app that then starts
// is busy at once, before it used any CPU, not judged by what its threads do at that instant.
TEST_F(AppsCpuUseTest, AnAppThatStartsWhereNoneRanIsBusyAtOnce) {
  AppsCpuUse apps;
  apps.none_at_work();
  Holder started(cache(), /*spin=*/false);
  ASSERT_TRUE(started.holds());
  EXPECT_TRUE(apps.busy(at_work()));
}

// Another user's locks say nothing about the apps of this cache and cost the helper nothing: with
// 120 000 of them taken after an idle app's, on the CPU where it took its own, the helper found
// that app no more (it read /proc/locks only so far) and waited behind it at nice 19 for ever.
TEST_F(AppsCpuUseTest, AnIdleAppIsNotBusyWhateverLocksOtherProcessesHold) {
  const int cpu = first_cpu();
  Holder idle(cache(), /*spin=*/false, cpu);
  ASSERT_TRUE(idle.holds());
  ChildProcess hoarder([&](const ChildProcess& child) { hoard_locks(child, root_, 120000, cpu); });
  ASSERT_TRUE(hoarder.started());
  EXPECT_EQ(at_work(), std::vector<std::int64_t>({idle.pid()}));
  AppsCpuUse apps;
  EXPECT_FALSE(apps.busy(at_work())) << "blocked on a pipe, it uses no CPU";
}

TEST_F(AppsCpuUseTest, WhatCannotBeToldIsTakenAsBusy) {
  AppsCpuUse apps;
  EXPECT_TRUE(apps.busy({})) << "the store saw an app at work, then named none";
  EXPECT_TRUE(apps.busy({fileops::ProcessLock::kHolderNotVisible})) << "in another pid namespace";
}

}  // namespace
}  // namespace jitcache::tool
