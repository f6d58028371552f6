// Tests for DiskStore::lock_key, the per-key build lock of cross-process single-flight: one holder
// at a time (also across processes), a bounded wait, no lock files left behind, and a holder that
// dies releases it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../child_processes.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;
using testing::ChildProcess;

class KeyLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/jitcache-keylock-XXXXXX";
    ASSERT_TRUE(::mkdtemp(pattern));
    root_ = pattern;
    store_ = open(false);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<DiskStore> open(bool read_only) {
    StoreLimits limits;
    limits.read_only = read_only;
    std::string error;
    auto store = DiskStore::open(root_ / "cache", limits, &error);
    EXPECT_TRUE(store) << error;
    return store;
  }
  fs::path lock_file() const { return root_ / "cache" / "locks" / (kKey.hex() + ".lock"); }

  const Digest128 kKey{0x1234, 0x5678};
  fs::path root_;
  std::unique_ptr<DiskStore> store_;
};

TEST_F(KeyLockTest, OneHolderAtATimeAndTheWaitIsBounded) {
  KeyLock first, second;
  ASSERT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &first));
  EXPECT_TRUE(first.held());
  EXPECT_EQ(store_->lock_key(kKey, std::chrono::milliseconds(20), &second),
            std::errc::resource_unavailable_try_again);
  EXPECT_FALSE(second.held());
  // Another key is independent.
  KeyLock other;
  EXPECT_FALSE(store_->lock_key(Digest128{1, 1}, std::chrono::milliseconds(0), &other));
  first.release();
  EXPECT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &second));
}

TEST_F(KeyLockTest, OnlyAWaiterMarksTheKeyWantedAndTheHolderClearsTheMark) {
  KeyLock holder, waiter;
  ASSERT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &holder));
  EXPECT_FALSE(store_->key_wanted(kKey));  // the holder alone: nobody waits for the key
  EXPECT_EQ(store_->lock_key(kKey, std::chrono::milliseconds(0), &waiter), std::errc::resource_unavailable_try_again);
  EXPECT_FALSE(store_->key_wanted(kKey));  // a try without waiting leaves no mark
  EXPECT_EQ(store_->lock_key(kKey, std::chrono::milliseconds(20), &waiter), std::errc::resource_unavailable_try_again);
  EXPECT_TRUE(store_->key_wanted(kKey));  // a process waited (capture = release stores at once then)
  holder.release();
  EXPECT_FALSE(store_->key_wanted(kKey));
}

// A capture helper waits for a key's lock to build the key itself: a run holding the lock must not
// read its binary for it.
TEST_F(KeyLockTest, AWaiterThatBuildsTheKeyItselfDoesNotMarkItWanted) {
  KeyLock holder, waiter;
  ASSERT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &holder));
  EXPECT_EQ(store_->lock_key(kKey, std::chrono::milliseconds(20), &waiter, DiskStore::Waiter::builds_it_itself),
            std::errc::resource_unavailable_try_again);
  EXPECT_FALSE(store_->key_wanted(kKey));
  holder.release();
  EXPECT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(20), &waiter, DiskStore::Waiter::builds_it_itself));
}

TEST_F(KeyLockTest, AWaiterThatGaveUpTakesItsMarkBackAndAnotherStillWaitingMarksItAgain) {
  KeyLock holder, waiter;
  ASSERT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &holder));
  EXPECT_EQ(store_->lock_key(kKey, std::chrono::milliseconds(20), &waiter), std::errc::resource_unavailable_try_again);
  ASSERT_TRUE(store_->key_wanted(kKey));
  store_->stop_wanting(kKey);
  EXPECT_FALSE(store_->key_wanted(kKey));
  EXPECT_EQ(store_->lock_key(kKey, std::chrono::milliseconds(20), &waiter), std::errc::resource_unavailable_try_again);
  EXPECT_TRUE(store_->key_wanted(kKey));
}

TEST_F(KeyLockTest, ReleasingRemovesTheLockFile) {
  {
    KeyLock lock;
    ASSERT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &lock));
    EXPECT_TRUE(fs::exists(lock_file()));
  }
  EXPECT_FALSE(fs::exists(lock_file()));
}

// The capture helper's handover (capture/hand_over.hpp): a descriptor of the held lock (what a
// child inherits) is adopted; anything else handed over is refused and closed, never trusted.
TEST_F(KeyLockTest, AHandedOverLockIsAdoptedOnlyWhenItIsTheKeysHeldLockFile) {
  KeyLock app;
  ASSERT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &app));
  KeyLock helper;
  EXPECT_FALSE(store_->adopt_key_lock(kKey, ::dup(static_cast<int>(app.native_handle())), true, &helper));
  EXPECT_TRUE(helper.held());
  // The lock of another key, or a file that is no lock, proves nothing.
  KeyLock wrong;
  EXPECT_TRUE(store_->adopt_key_lock(Digest128{9, 9}, ::dup(static_cast<int>(app.native_handle())), true, &wrong));
  EXPECT_FALSE(wrong.held());
  EXPECT_TRUE(store_->adopt_key_lock(kKey, ::open("/dev/null", O_RDONLY), true, &wrong));
  EXPECT_FALSE(wrong.held());
  EXPECT_TRUE(store_->adopt_key_lock(kKey, -1, true, &wrong));
  // The app lets go: the file stays and the lock stays held by the helper's descriptor.
  app.let_go();
  EXPECT_TRUE(fs::exists(lock_file()));
  KeyLock newcomer;
  EXPECT_EQ(store_->lock_key(kKey, std::chrono::milliseconds(0), &newcomer), std::errc::resource_unavailable_try_again);
  helper.release();
  EXPECT_FALSE(fs::exists(lock_file()));
  EXPECT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &newcomer));
}

TEST_F(KeyLockTest, AnotherProcessWaitsForTheHolderAndGetsTheLockWhenItIsReleased) {
  int go[2], ready[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(ready), 0);
  // Forked before the parent locks: a child forked while it held the lock would share it.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  char byte;
  if (child == 0) {
    if (::read(go[0], &byte, 1) != 1) _exit(2);
    auto store = open(false);
    KeyLock lock;
    // Busy while the parent holds it; then waits (up to a minute) until the parent lets go.
    bool busy = store->lock_key(kKey, std::chrono::milliseconds(0), &lock) == std::errc::resource_unavailable_try_again;
    (void)!::write(ready[1], "r", 1);
    bool got = !store->lock_key(kKey, std::chrono::minutes(1), &lock);
    _exit(busy && got ? 0 : 1);
  }
  KeyLock held;
  ASSERT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &held));
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);  // the child has seen the lock busy
  held.release();  // removes the file the child may be polling: it must find the new one
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int fd : {go[0], go[1], ready[0], ready[1]}) ::close(fd);
}

TEST_F(KeyLockTest, AHolderThatDiesReleasesTheLock) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = open(false);
    KeyLock lock;
    if (store->lock_key(kKey, std::chrono::milliseconds(0), &lock)) _exit(1);
    ::kill(::getpid(), SIGKILL);  // dies holding it; the lock file stays behind
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(fs::exists(lock_file()));
  KeyLock lock;
  EXPECT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &lock));
}

TEST_F(KeyLockTest, ReadOnlyStoreTakesNoLock) {
  auto read_only = open(true);
  KeyLock lock;
  EXPECT_EQ(read_only->lock_key(kKey, std::chrono::milliseconds(0), &lock), std::errc::read_only_file_system);
  EXPECT_FALSE(lock.held());
  EXPECT_FALSE(fs::exists(root_ / "cache" / "locks"));
}

// Capture markers (docs/concurrency.md, "Captures in flight"): one owner per key, counted while
// held, waited for (bounded), and a marker whose owner died is neither counted nor waited for.
TEST_F(KeyLockTest, CaptureMarkersAreCountedWhileHeldAndWaitedForBounded) {
  EXPECT_EQ(store_->captures_in_flight(), 0u);
  KeyLock mark, second;
  ASSERT_FALSE(store_->mark_capture(kKey, 0, &mark));
  EXPECT_EQ(store_->mark_capture(kKey, 0, &second), std::errc::resource_unavailable_try_again) << "one owner per key";
  KeyLock build;
  EXPECT_FALSE(store_->lock_key(kKey, std::chrono::milliseconds(0), &build)) << "a marker is not the build lock";
  EXPECT_EQ(store_->captures_in_flight(), 1u);
  std::size_t shown = 0;
  EXPECT_EQ(store_->wait_for_captures(std::chrono::milliseconds(30), [&](std::size_t n) { shown = n; }), 1u);
  EXPECT_EQ(shown, 1u);
  mark.release();
  EXPECT_EQ(store_->captures_in_flight(), 0u);
  EXPECT_FALSE(fs::exists(root_ / "cache" / "locks" / (kKey.hex() + ".capture"))) << "its owner removes it";
}

// Issue 39: the marker names the app's own build time of its key and, once the helper starts it,
// since when it builds: they bound a wait for the helper. What another writer left there (not a
// number, an absurd one, a huge file) names nothing.
TEST_F(KeyLockTest, ACaptureMarkerNamesTheBuildItSavesAndWhenItStartedAndNothingElseIsBelieved) {
  EXPECT_FALSE(store_->capture_progress(kKey).build_time) << "no marker";
  KeyLock mark;
  ASSERT_FALSE(store_->mark_capture(kKey, 123456, &mark));
  ASSERT_TRUE(store_->capture_progress(kKey).build_time);
  EXPECT_EQ(store_->capture_progress(kKey).build_time->count(), 123456);
  EXPECT_FALSE(store_->capture_progress(kKey).started_ns) << "handed over, not started";
  const auto before = std::chrono::system_clock::now().time_since_epoch();
  store_->mark_capture_started(kKey, mark);
  const auto after = std::chrono::system_clock::now().time_since_epoch();
  const DiskStore::CaptureProgress started = store_->capture_progress(kKey);
  ASSERT_TRUE(started.started_ns);
  EXPECT_GE(*started.started_ns, std::chrono::duration_cast<std::chrono::nanoseconds>(before).count());
  EXPECT_LE(*started.started_ns, std::chrono::duration_cast<std::chrono::nanoseconds>(after).count());
  EXPECT_EQ(started.build_time->count(), 123456) << "the build time stays";
  const fs::path marker = root_ / "cache" / "locks" / (kKey.hex() + ".capture");
  for (const std::string& text : {std::string("build_us x\n"), std::string("build_us \n"), std::string("12\n"),
                                  std::string("build_us 99999999999999999999\n"), std::string("build_us -5\n"),
                                  std::string("build_us 5x\n"), "build_us 1" + std::string(200, '0')}) {
    std::ofstream(marker, std::ios::trunc) << text;
    EXPECT_FALSE(store_->capture_progress(kKey).build_time) << text;
  }
  std::ofstream(marker, std::ios::trunc) << "build_us 5\nstarted_ns -1\n";
  EXPECT_FALSE(store_->capture_progress(kKey).started_ns);
  mark.release();
  KeyLock again;
  ASSERT_FALSE(store_->mark_capture(kKey, 7, &again));
  EXPECT_EQ(store_->capture_progress(kKey).build_time->count(), 7) << "a new marker says only its own time";
  EXPECT_FALSE(store_->capture_progress(kKey).started_ns);
}

// Issue 39: a started marker may name the worker that builds the key and its CPU time then (a
// waiter weighs its pace). Numbers out of range, a worker without its CPU time, or one named before
// the start name nothing.
TEST_F(KeyLockTest, AStartedCaptureMarkerNamesItsWorkerAndNothingOddIsBelieved) {
  KeyLock mark;
  ASSERT_FALSE(store_->mark_capture(kKey, 5000, &mark));
  store_->mark_capture_started(kKey, mark, DiskStore::CaptureWorker{4242, std::chrono::microseconds(777)});
  DiskStore::CaptureProgress progress = store_->capture_progress(kKey);
  ASSERT_TRUE(progress.worker);
  EXPECT_EQ(progress.worker->pid, 4242);
  EXPECT_EQ(progress.worker->cpu.count(), 777);
  EXPECT_EQ(progress.build_time->count(), 5000);
  const fs::path marker = root_ / "cache" / "locks" / (kKey.hex() + ".capture");
  EXPECT_LE(fs::file_size(marker), 128u);
  store_->mark_capture_started(kKey, mark, DiskStore::CaptureWorker{-3, std::chrono::microseconds(1)});
  EXPECT_FALSE(store_->capture_progress(kKey).worker) << "not written";
  EXPECT_TRUE(store_->capture_progress(kKey).started_ns);
  for (const std::string& text :
       {std::string("build_us 5\nworker_pid 12\nworker_cpu_us 3\n"),  // not started
        std::string("build_us 5\nstarted_ns 9\nworker_pid 12\n"),
        std::string("build_us 5\nstarted_ns 9\nworker_pid 0\nworker_cpu_us 3\n"),
        std::string("build_us 5\nstarted_ns 9\nworker_pid 99999999\nworker_cpu_us 3\n"),
        std::string("build_us 5\nstarted_ns 9\nworker_pid 12\nworker_cpu_us -3\n"),
        std::string("build_us 5\nstarted_ns 9\nworker_pid 12\nworker_cpu_us 99999999999999999\n")}) {
    std::ofstream(marker, std::ios::trunc) << text;
    EXPECT_FALSE(store_->capture_progress(kKey).worker) << text;
  }
  std::ofstream(marker, std::ios::trunc) << "build_us 5\nstarted_ns 9\nworker_pid 12\nworker_cpu_us 3\n";
  EXPECT_TRUE(store_->capture_progress(kKey).worker);
}

// A child process that announces itself as an app at work on the store at `root`, then waits to
// be told to end (its store closed as an app's is at exit) or is killed.
std::unique_ptr<ChildProcess> app_process(const fs::path& root, bool read_only = false) {
  return std::make_unique<ChildProcess>([&](const ChildProcess& child) {
    StoreLimits limits;
    limits.read_only = read_only;
    std::unique_ptr<DiskStore> store = DiskStore::open(root, limits, nullptr);
    if (!store) return;
    store->announce_app();
    child.ready();
    child.wait_for_end();
  });
}

// An app at work on the store locks a file of its own in locks/apps/ for as long as its store is
// open: several apps at once, each named by its pid, and none once they have gone (however they
// ended); the next app to announce itself removes the files of those that ended.
TEST_F(KeyLockTest, AppsAtWorkAreSeenWhileTheyHoldTheirStoreAndNotAfter) {
  const auto sorted = [](std::vector<std::int64_t> pids) {
    std::sort(pids.begin(), pids.end());
    return pids;
  };
  const fs::path apps = root_ / "cache" / "locks" / "apps";
  const auto files = [&] { return std::distance(fs::directory_iterator(apps), fs::directory_iterator()); };
  EXPECT_TRUE(store_->apps_at_work().empty()) << "none yet";
  auto first = app_process(root_ / "cache"), second = app_process(root_ / "cache");
  ASSERT_TRUE(first->started() && second->started());
  EXPECT_EQ(sorted(store_->apps_at_work()), sorted({first->pid(), second->pid()}));
  const std::int64_t second_pid = second->pid();
  first->end();
  EXPECT_EQ(store_->apps_at_work(), std::vector<std::int64_t>({second_pid})) << "the second is still at work";
  second->end(SIGKILL);
  EXPECT_TRUE(store_->apps_at_work().empty()) << "an app that died is not at work";
  EXPECT_EQ(files(), 2) << "the files of both stay, unlocked";
  auto third = app_process(root_ / "cache");
  ASSERT_TRUE(third->started());
  EXPECT_EQ(store_->apps_at_work(), std::vector<std::int64_t>({third->pid()}));
  EXPECT_EQ(files(), 1) << "the next app removed them";
  third->end();
  auto read_only = app_process(root_ / "cache", /*read_only=*/true);
  ASSERT_TRUE(read_only->started());
  EXPECT_TRUE(store_->apps_at_work().empty()) << "a read-only store is never written to";
}

// A helper is never an app of its own: this process's announcement is not named to it (nor can it
// be asked of: closing a descriptor of its file would let go of its lock). What is in locks/apps/
// that no app holds, whatever it is, is no app either, and asking costs no wait.
TEST_F(KeyLockTest, OnlyOtherProcessesHoldingTheirOwnFilesAreAppsAtWork) {
  auto own = open(false);
  own->announce_app();
  const fs::path apps = root_ / "cache" / "locks" / "apps";
  ASSERT_EQ(std::distance(fs::directory_iterator(apps), fs::directory_iterator()), 1);
  EXPECT_TRUE(store_->apps_at_work().empty());
  ASSERT_EQ(::mkfifo((apps / "1-2-3.app").c_str(), 0600), 0);
  std::ofstream(apps / "4-5-6.app") << "";
  fs::create_symlink(apps / "4-5-6.app", apps / "7-8-9.app");
  EXPECT_TRUE(store_->apps_at_work().empty());
  auto app = app_process(root_ / "cache");
  ASSERT_TRUE(app->started());
  EXPECT_EQ(store_->apps_at_work(), std::vector<std::int64_t>({app->pid()}));
  EXPECT_FALSE(fs::exists(apps / "4-5-6.app")) << "a file nobody holds is one whose app ended";
}

TEST_F(KeyLockTest, AMarkerWhoseOwnerDiedIsNotInFlightAndIsRemoved) {
  const pid_t child = ::fork();
  if (child == 0) {
    KeyLock mark;
    _exit(store_->mark_capture(kKey, 0, &mark) ? 1 : 0);  // dies holding it: the file stays, unlocked
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const fs::path marker = root_ / "cache" / "locks" / (kKey.hex() + ".capture");
  ASSERT_TRUE(fs::exists(marker));
  EXPECT_EQ(store_->wait_for_captures(std::chrono::milliseconds(5000)), 0u);
  EXPECT_FALSE(fs::exists(marker));
}

// `jitcache wait` marks each capture it waits for as wanted, again just before it waits for it;
// a key stored (its build lock let go, which removes the marker) while the wait was on another key
// was marked again after the fact. Once the wait is over no marker is left (issue 38: it pinned
// every later helper at full priority). The same two keys, made in the same order (so listed in the
// same order), settle in both orders: in one of them the key waited for second settled first.
TEST_F(KeyLockTest, AWaitLeavesNoWantedMarkerForKeysThatSettled) {
  const fs::path locks = root_ / "cache" / "locks";
  const Digest128 a{1, 1}, b{2, 2};
  for (bool a_first : {true, false}) {
    SCOPED_TRACE(a_first ? "A settles first" : "B settles first");
    KeyLock mark_a, mark_b;
    ASSERT_FALSE(store_->mark_capture(a, 0, &mark_a));
    ASSERT_FALSE(store_->mark_capture(b, 0, &mark_b));
    std::size_t left = 99;
    std::thread waiter([&] { left = store_->wait_for_captures(std::chrono::milliseconds(20000)); });
    const auto marked = [&] { return fs::exists(locks / (a.hex() + ".wanted")) && fs::exists(locks / (b.hex() + ".wanted")); };
    for (int i = 0; i < 20000 && !marked(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(marked()) << "the wait marks what it waits for";
    // As a helper ends a capture: the build lock (taking the marker with it), then the capture marker.
    for (const Digest128* key : a_first ? std::vector{&a, &b} : std::vector{&b, &a}) {
      KeyLock build;
      ASSERT_FALSE(store_->lock_key(*key, std::chrono::milliseconds(0), &build));
      build.release();
      (key == &a ? mark_a : mark_b).release();
    }
    waiter.join();
    EXPECT_EQ(left, 0u);
    EXPECT_FALSE(fs::exists(locks / (a.hex() + ".wanted")));
    EXPECT_FALSE(fs::exists(locks / (b.hex() + ".wanted")));
  }
}

// A marker handed to another process stays held by it: the helper adopts what the app sent.
TEST_F(KeyLockTest, AHandedOverMarkerIsAdoptedOnlyAsItsKeys) {
  KeyLock mark, adopted, wrong;
  ASSERT_FALSE(store_->mark_capture(kKey, 0, &mark));
  const int copy = ::dup(static_cast<int>(mark.native_handle()));
  const int copy2 = ::dup(static_cast<int>(mark.native_handle()));
  EXPECT_TRUE(store_->adopt_capture_mark(Digest128{9, 9}, copy2, &wrong)) << "another key's marker";
  ASSERT_FALSE(store_->adopt_capture_mark(kKey, copy, &adopted));
  mark.let_go();  // the sender's copy goes, the adopted one keeps it held
  EXPECT_EQ(store_->captures_in_flight(), 1u);
  adopted.release();
  EXPECT_EQ(store_->captures_in_flight(), 0u);
}

}  // namespace
}  // namespace jitcache
