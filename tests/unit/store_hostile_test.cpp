// DiskStore in a hostile environment: a file-size limit, a full disk, symlinked folders, a root
// that vanishes or sits below a symlinked ancestor. Every case must end in a reported failure
// (the caller runs uncached), never in a crash, a signal or a wrong entry.
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "hashing/digest.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

Digest128 key_of(std::uint64_t n) { return Digest128{0x9e3779b97f4a7c15ull * (n + 1), n}; }

class StoreHostile : public ::testing::Test {
 protected:
  fs::path base;
  void SetUp() override {
    char pattern[] = "/tmp/jitcache-hostile-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    base = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
  std::unique_ptr<DiskStore> open_store(const fs::path& root) {
    std::string error;
    auto store = DiskStore::open(root, StoreLimits{}, &error);
    EXPECT_TRUE(store) << error;
    return store;
  }
};

// Runs `body` in a child process; returns its exit status (128 + signal when killed).
template <typename Body>
int in_child(Body body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

TEST_F(StoreHostile, FileSizeLimitFailsTheSaveInsteadOfKillingTheProcess) {
  auto store = open_store(base / "cache");
  // Without the check the write raises SIGXFSZ, whose default action kills the process.
  int status = in_child([&] {
    struct rlimit limit {4096, RLIM_INFINITY};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 3;
    SaveResult saved = store->save(key_of(1), std::string(64 * 1024, 'x'), nullptr);
    if (saved.status != SaveStatus::error) return 4;
    if (store->load(key_of(1)).status != LoadStatus::miss) return 5;
    // Small entries still fit under the limit.
    if (store->save(key_of(2), std::string(100, 'y'), nullptr).status != SaveStatus::stored) return 6;
    return store->load(key_of(2)).status == LoadStatus::hit ? 0 : 7;
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(store->rescan_size().entries, 1u);
}

TEST_F(StoreHostile, FullDiskFailsTheSaveAndLeavesNoTempFiles) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const fs::path mount_point = base / "small";
  fs::create_directories(mount_point);
  if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k,mode=0700") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (no CAP_SYS_ADMIN in this container?)";
  }
  {
    auto store = open_store(mount_point / "cache");
    ASSERT_TRUE(store);
    SaveResult saved = store->save(key_of(1), std::string(256 * 1024, 'x'), nullptr);
    EXPECT_EQ(saved.status, SaveStatus::error);
    EXPECT_NE(saved.reason.find("No space left"), std::string::npos) << saved.reason;
    EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::miss);
    EXPECT_TRUE(fs::is_empty(mount_point / "cache" / "tmp"));
    SaveResult small = store->save(key_of(2), std::string(1000, 'y'), nullptr);
    EXPECT_EQ(small.status, SaveStatus::stored) << small.reason;
    EXPECT_EQ(store->load(key_of(2)).status, LoadStatus::hit);
    EXPECT_EQ(store->size().entries, store->rescan_size().entries);
  }
  ::umount2(mount_point.c_str(), MNT_DETACH);
}

TEST_F(StoreHostile, SymlinkedShardFolderIsNotWrittenThrough) {
  auto store = open_store(base / "cache");
  const std::string hex = key_of(1).hex();
  const fs::path elsewhere = base / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, base / "cache" / hex.substr(0, 2));
  SaveResult saved = store->save(key_of(1), "binary", nullptr);
  EXPECT_EQ(saved.status, SaveStatus::error) << saved.reason;
  EXPECT_TRUE(fs::is_empty(elsewhere));
  EXPECT_NE(store->load(key_of(1)).status, LoadStatus::hit);
}

TEST_F(StoreHostile, RootBelowASymlinkedAncestorWorks) {
  fs::create_directories(base / "real");
  fs::create_directory_symlink(base / "real", base / "link");
  auto store = open_store(base / "link" / "deeper" / "cache");
  ASSERT_TRUE(store);
  EXPECT_EQ(store->save(key_of(1), "binary", nullptr).status, SaveStatus::stored);
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::hit);
  EXPECT_TRUE(fs::exists(base / "real" / "deeper" / "cache" / "size"));
}

TEST_F(StoreHostile, RootThatVanishedIsNotRecreated) {
  auto store = open_store(base / "cache");
  ASSERT_EQ(store->save(key_of(1), "binary", nullptr).status, SaveStatus::stored);
  fs::remove_all(base / "cache");
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::miss);
  EXPECT_EQ(store->save(key_of(2), "other", nullptr).status, SaveStatus::error);
  EXPECT_FALSE(store->remove(key_of(1)));
  store->size();
  store->evict(0, 0);
  EXPECT_FALSE(fs::exists(base / "cache"));
}

TEST_F(StoreHostile, UnwritableRootStillServesHits) {
  auto store = open_store(base / "cache");
  ASSERT_EQ(store->save(key_of(1), "binary", nullptr).status, SaveStatus::stored);
  // As root permissions do not bind: drop to nobody in a child that owns nothing here.
  int status = in_child([&] {
    if (::geteuid() == 0) {
      std::error_code ignored;
      fs::permissions(base, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec, ignored);
      fs::permissions(base / "cache", fs::perms::owner_read | fs::perms::owner_exec, ignored);
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 3;
      // Owned by another user now: open() refuses, which is the "uncached" answer.
      std::string error;
      return DiskStore::open(base / "cache", StoreLimits{}, &error) == nullptr ? 0 : 4;
    }
    fs::permissions(base / "cache", fs::perms::owner_read | fs::perms::owner_exec);
    std::string error;
    auto readonly = DiskStore::open(base / "cache", StoreLimits{}, &error);
    if (!readonly) return 5;
    if (readonly->load(key_of(1)).status != LoadStatus::hit) return 6;
    return readonly->save(key_of(2), "other", nullptr).status == SaveStatus::error ? 0 : 7;
  });
  EXPECT_EQ(status, 0);
  fs::permissions(base / "cache", fs::perms::owner_all);
}

}  // namespace
}  // namespace jitcache
