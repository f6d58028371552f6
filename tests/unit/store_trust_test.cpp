// The store's trust model (docs/reliability.md, "Trust model"): what is served is exactly what
// this user (or root) stored under that key, reached through the root held open. Each test plants
// what an attacker or an accident would and asserts it is never served, never hangs the caller,
// and is reported by verify. Multi-user cases drop to uid 65534 in a forked child (root only).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/platform.hpp"
#include "core/settings.hpp"
#include "core/stats.hpp"
#include "hashing/digest.hpp"
#include "store/files/file_ops.hpp"
#include "store/local/disk_store.hpp"
#include "tests/unit/store_entry_files.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

constexpr unsigned kNobody = 65534;

Digest128 key_of(std::uint64_t n) { return Digest128{0x9e3779b97f4a7c15ull * (n + 1), n}; }

// Runs `body` in a child process with a watchdog: a child stuck in open() on a FIFO is killed by
// SIGALRM and the test fails on that status instead of hanging. Returns the exit status, or
// 128 + signal.
int in_child(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(20);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

bool drop_to_nobody() { return ::setgid(kNobody) == 0 && ::setuid(kNobody) == 0; }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class StoreTrust : public ::testing::Test {
 protected:
  fs::path base;
  fs::path root;
  void SetUp() override {
    char pattern[] = "/tmp/jitcache-trust-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    base = pattern;
    root = base / "cache";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
  std::unique_ptr<DiskStore> open_store(StoreLimits limits = {}) {
    std::string error;
    auto store = DiskStore::open(root, limits, &error);
    EXPECT_TRUE(store) << error;
    return store;
  }
  fs::path entry_file(const Digest128& key, const std::string& extension) const {
    return store_test::entry_name(root, key, extension);
  }
  // An entry whose file `extension` names: a format 2 entry file (".entry"), else a format 1 pair
  // as an older jitcache wrote it (".json", ".bin"): both are held to the same rules.
  void store_entry(DiskStore& store, const Digest128& key, const std::string& binary, const std::string& extension) {
    if (extension == ".entry") {
      ASSERT_EQ(store.save(key, binary, nullptr).status, SaveStatus::stored);
    } else {
      store_test::write_format1_entry(root, key, binary);
    }
  }
  std::string problems_of(DiskStore& store, bool quarantine) {
    std::string all;
    for (const auto& problem : store.verify(quarantine)) all += problem.path + ": " + problem.problem + "\n";
    return all;
  }
};

// --- issue 14.4: a FIFO or device where a file should be --------------------------------------

TEST_F(StoreTrust, FifoInPlaceOfAnEntryFileNeitherBlocksNorIsServed) {
  auto store = open_store();
  for (const char* extension : {".entry", ".json", ".bin"}) {
    const Digest128 key = key_of(extension[1]);
    store_entry(*store, key, "binary", extension);
    fs::remove(entry_file(key, extension));
    ASSERT_EQ(::mkfifo(entry_file(key, extension).c_str(), 0600), 0);
    // Without O_NONBLOCK the open() waits for a writer forever; the watchdog turns that into 142.
    const int status = in_child([&] {
      if (store->load(key).status != LoadStatus::corrupt) return 3;
      if (store->load(key).status != LoadStatus::miss) return 4;  // quarantined: out of the way
      if (store->save(key, "binary 2", nullptr).status != SaveStatus::stored) return 5;
      return store->load(key).binary == "binary 2" ? 0 : 6;
    });
    EXPECT_EQ(status, 0) << extension;
  }
}

TEST_F(StoreTrust, VerifyReportsAFifoInsteadOfHanging) {
  auto store = open_store();
  store_entry(*store, key_of(1), "binary", ".bin");
  fs::remove(entry_file(key_of(1), ".bin"));
  ASSERT_EQ(::mkfifo(entry_file(key_of(1), ".bin").c_str(), 0600), 0);
  store_entry(*store, key_of(2), "binary", ".entry");
  fs::remove(entry_file(key_of(2), ".entry"));
  ASSERT_EQ(::mkfifo(entry_file(key_of(2), ".entry").c_str(), 0600), 0);
  const int status = in_child([&] {
    const std::string problems = problems_of(*store, /*quarantine=*/false);
    if (problems.find("entry file is not a regular file") == std::string::npos) return 4;
    return problems.find("binary is not a regular file") != std::string::npos ? 0 : 3;
  });
  EXPECT_EQ(status, 0);
}

TEST_F(StoreTrust, ConfigFileThatIsAFifoOrADeviceIsIgnoredWithoutHanging) {
  auto store = open_store();
  ASSERT_EQ(::mkfifo((root / "jitcache.conf").c_str(), 0600), 0);
  int status = in_child([&] {
    ::setenv("JITCACHE_DIR", root.c_str(), 1);
    const Settings settings = load_settings();  // blocks for ever without O_NONBLOCK
    for (const auto& problem : settings.problems) {
      if (problem.find("jitcache.conf not read") != std::string::npos) return 0;
    }
    return 3;
  });
  EXPECT_EQ(status, 0);
  fs::remove(root / "jitcache.conf");
  // A symlink to /dev/zero: read until memory runs out without the no-follow, size-capped open.
  fs::create_symlink("/dev/zero", root / "jitcache.conf");
  status = in_child([&] {
    ::setenv("JITCACHE_DIR", root.c_str(), 1);
    const Settings settings = load_settings();
    return settings.problems.empty() ? 3 : 0;
  });
  EXPECT_EQ(status, 0);
}

TEST_F(StoreTrust, ConfigFileIsReadOnlyFromAnAcceptedRoot) {
  auto store = open_store();
  write_file(root / "jitcache.conf", "max_size = 12345\n");
  ::chmod((root / "jitcache.conf").c_str(), 0600);
  auto max_size_seen = [&] {
    return in_child([&] {
      ::unsetenv("JITCACHE_MAX_SIZE");
      ::setenv("JITCACHE_DIR", root.c_str(), 1);
      return load_settings().max_size == 12345 ? 1 : 0;
    });
  };
  EXPECT_EQ(max_size_seen(), 1);  // the store's own config applies
  ::chmod(root.c_str(), 0777);    // a root anyone can write: its config could be anyone's
  EXPECT_EQ(max_size_seen(), 0);
  ::chmod(root.c_str(), 0700);
  ::chmod((root / "jitcache.conf").c_str(), 0666);  // a config anyone can write
  EXPECT_EQ(max_size_seen(), 0);
}

// --- issue 15.3: an entry is bound to its key ----------------------------------------------

// Both formats: the entry file's header names the key, format 1's sidecar its `key` field.
TEST_F(StoreTrust, EntryCopiedOrLinkedUnderAnotherKeyIsNotServed) {
  struct Format {
    const char* commit;                    // the file verify names
    std::vector<const char*> files;        // what is copied and linked
    const char* reported;
  };
  std::uint64_t n = 0;
  for (const Format& format : {Format{".entry", {".entry"}, "entry file belongs to key"},
                               Format{".json", {".bin", ".json"}, "sidecar belongs to key"}}) {
    auto store = open_store();
    const Digest128 victim = key_of(++n), other = key_of(++n), linked = key_of(++n);
    store_entry(*store, victim, "victim binary", format.commit);
    store_entry(*store, other, "other binary", format.commit);
    // The other key's files copied over the victim's names; hard-linked under a third key.
    fs::create_directories(entry_file(linked, format.commit).parent_path());
    for (const char* extension : format.files) {
      fs::copy_file(entry_file(other, extension), entry_file(victim, extension), fs::copy_options::overwrite_existing);
      fs::create_hard_link(entry_file(other, extension), entry_file(linked, extension));
    }
    const std::string problems = problems_of(*store, /*quarantine=*/false);
    EXPECT_NE(problems.find(entry_file(victim, format.commit).string() + ": " + format.reported + " " + other.hex()),
              std::string::npos)
        << problems;
    EXPECT_NE(problems.find(entry_file(linked, format.commit).string() + ": " + format.reported), std::string::npos)
        << problems;
    for (const Digest128& key : {victim, linked}) {
      const LoadResult loaded = store->load(key);
      EXPECT_EQ(loaded.status, LoadStatus::corrupt) << loaded.reason;
      EXPECT_NE(loaded.reason.find("another key"), std::string::npos) << loaded.reason;
    }
    EXPECT_EQ(store->load(other).binary, "other binary");
    EXPECT_EQ(store->size().entries, store->rescan_size().entries);
  }
}

// --- issue 15.4: a folder where a file should be ---------------------------------------------

TEST_F(StoreTrust, FolderInPlaceOfAnEntryFileIsQuarantinedNotABlockForEver) {
  auto store = open_store();
  for (const char* extension : {".entry", ".json", ".bin"}) {
    const Digest128 key = key_of(10 + extension[1]);
    store_entry(*store, key, "binary", extension);
    fs::remove(entry_file(key, extension));
    fs::create_directories(entry_file(key, extension) / "inside");
    EXPECT_NE(store->load(key).status, LoadStatus::hit) << extension;
    // The next save of that key must work (a folder left there fails every rename for good).
    EXPECT_EQ(store->save(key, "binary 2", nullptr).status, SaveStatus::stored) << extension;
    EXPECT_EQ(store->load(key).binary, "binary 2") << extension;
    EXPECT_FALSE(fs::is_directory(entry_file(key, extension))) << extension;
  }
}

TEST_F(StoreTrust, VerifyReportsAndQuarantinesAFolderInPlaceOfAnEntryFile) {
  auto store = open_store();
  for (const char* extension : {".entry", ".json"}) {
    const Digest128 key = key_of(extension[1]);
    store_entry(*store, key, "binary", extension);
    fs::remove(entry_file(key, extension));
    fs::create_directories(entry_file(key, extension));  // a folder where the file was: no longer committed
    std::string problems = problems_of(*store, /*quarantine=*/false);
    EXPECT_NE(problems.find(std::string(extension[1] == 'e' ? "entry file" : "sidecar") + " is not a regular file"),
              std::string::npos)
        << problems;
    problems = problems_of(*store, /*quarantine=*/true);
    EXPECT_NE(problems.find("(quarantined)"), std::string::npos) << problems;
    EXPECT_FALSE(fs::exists(entry_file(key, extension)));
    EXPECT_EQ(problems_of(*store, false), "");
  }
}

// --- issue 15.5: what other users could write is never served ---------------------------------

TEST_F(StoreTrust, EntryFilesWritableByOthersAreNotServed) {
  auto store = open_store();
  for (const char* extension : {".entry", ".json", ".bin"}) {
    const Digest128 key = key_of(20 + extension[1]);
    store_entry(*store, key, "binary", extension);
    ASSERT_EQ(::chmod(entry_file(key, extension).c_str(), 0622), 0);
    EXPECT_NE(problems_of(*store, false).find("writable by group or others"), std::string::npos) << extension;
    const LoadResult loaded = store->load(key);
    EXPECT_EQ(loaded.status, LoadStatus::corrupt) << extension;
    EXPECT_NE(loaded.reason.find("writable by group or others"), std::string::npos) << loaded.reason;
  }
  // A shard folder others may write: someone could swap the files in it.
  const Digest128 key = key_of(30);
  ASSERT_EQ(store->save(key, "binary", nullptr).status, SaveStatus::stored);
  ASSERT_EQ(::chmod(entry_file(key, ".bin").parent_path().c_str(), 0777), 0);
  EXPECT_NE(store->load(key).status, LoadStatus::hit);
  EXPECT_EQ(store->save(key_of(30), "binary", nullptr).status, SaveStatus::error);
  EXPECT_NE(problems_of(*store, false).find("shard folder"), std::string::npos);
}

TEST_F(StoreTrust, EntriesAnotherUserPlantedAreRefusedAndReported) {
  if (::geteuid() != 0) GTEST_SKIP() << "planting as another user needs root (useradd / setuid)";
  auto store = open_store();
  const Digest128 key = key_of(1);
  ASSERT_EQ(store->save(key, "own binary", nullptr).status, SaveStatus::stored);
  // The root was open to others for a while (mode 0777): nobody replaces the entry with a valid
  // one of their own (same key in the sidecar, right checksum), then the owner closes the root.
  // A valid entry file for the key (its key, its checksums): only the owner differs.
  const std::string planted = read_file(entry_file(key, ".entry"));
  ASSERT_EQ(::chmod(base.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(root.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(entry_file(key, ".bin").parent_path().c_str(), 0777), 0);
  ASSERT_EQ(::chmod(entry_file(key, ".bin").parent_path().parent_path().c_str(), 0777), 0);
  const int planting = in_child([&] {
    if (!drop_to_nobody()) return 3;
    // nobody writes an entry of their own under the key through a temp name + rename.
    const fs::path file = entry_file(key, ".entry");
    write_file(file.string() + ".new", planted);
    std::error_code error;
    fs::rename(file.string() + ".new", file, error);
    if (error) return 4;
    ::chmod(file.c_str(), 0644);
    return 0;
  });
  ASSERT_EQ(planting, 0);
  ASSERT_EQ(::chmod(root.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(entry_file(key, ".bin").parent_path().c_str(), 0700), 0);
  ASSERT_EQ(::chmod(entry_file(key, ".bin").parent_path().parent_path().c_str(), 0700), 0);
  struct stat st {};
  ASSERT_EQ(::stat(entry_file(key, ".entry").c_str(), &st), 0);
  ASSERT_EQ(st.st_uid, kNobody);

  const std::string problems = problems_of(*store, /*quarantine=*/false);
  EXPECT_NE(problems.find("owned by another user"), std::string::npos) << problems;
  const LoadResult loaded = store->load(key);
  EXPECT_EQ(loaded.status, LoadStatus::corrupt) << loaded.reason;
  EXPECT_EQ(store->load(key).status, LoadStatus::miss);
}

TEST_F(StoreTrust, ShardFolderOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "another user's folder needs root (chown)";
  auto store = open_store();
  const Digest128 key = key_of(1);
  ASSERT_EQ(store->save(key, "binary", nullptr).status, SaveStatus::stored);
  const fs::path shard = entry_file(key, ".bin").parent_path();
  ASSERT_EQ(::chown(shard.c_str(), kNobody, kNobody), 0);
  EXPECT_NE(store->load(key).status, LoadStatus::hit);
  EXPECT_NE(problems_of(*store, false).find("owned by another user"), std::string::npos);
  EXPECT_EQ(store->save(key, "binary", nullptr).status, SaveStatus::error);
}

// Issue 28.7: a store folder (tmp/, locks/) another user made while the root was open to them
// made every save fail for good, while `verify` said all sound and `clear` left it. Now verify
// names it and clear moves it aside, after which saves work again.
TEST_F(StoreTrust, AnotherUsersStoreFolderIsReportedAndMovedAsideByClear) {
  if (::geteuid() != 0) GTEST_SKIP() << "another user's folder needs root (chown)";
  auto store = open_store();
  ASSERT_EQ(store->save(key_of(1), "binary", nullptr).status, SaveStatus::stored);
  ASSERT_EQ(::chown((root / "tmp").c_str(), kNobody, kNobody), 0);
  EXPECT_EQ(store->save(key_of(2), "binary", nullptr).status, SaveStatus::error);
  const std::string problems = problems_of(*store, false);
  EXPECT_NE(problems.find("tmp"), std::string::npos) << problems;
  EXPECT_NE(problems.find("owned by another user"), std::string::npos) << problems;
  const EvictionReport cleared = store->clear();
  ASSERT_EQ(cleared.moved_aside.size(), 1u);
  EXPECT_NE(cleared.moved_aside[0].find("tmp.foreign-"), std::string::npos) << cleared.moved_aside[0];
  EXPECT_EQ(store->save(key_of(2), "binary", nullptr).status, SaveStatus::stored);
  EXPECT_EQ(problems_of(*store, false), "");
}

TEST_F(StoreTrust, RefusedRootAdvisesRemovalNotChmod) {
  fs::create_directories(root);
  ::chmod(root.c_str(), 0770);
  std::string error;
  EXPECT_EQ(DiskStore::open(root, {}, &error), nullptr);
  EXPECT_EQ(error.find("chmod"), std::string::npos) << error;
  EXPECT_NE(error.find("remove it"), std::string::npos) << error;
}

// --- issue 15.6: the root is held open; its ancestors must be safe ---------------------------

TEST_F(StoreTrust, RootSwappedForASymlinkAfterOpenIsNotFollowed) {
  auto store = open_store();
  const Digest128 key = key_of(1);
  ASSERT_EQ(store->save(key, "real binary", nullptr).status, SaveStatus::stored);
  // An attacker's store with an entry under the same key that passes every content check.
  {
    std::string error;
    auto evil = DiskStore::open(base / "evil", {}, &error);
    ASSERT_TRUE(evil) << error;
    ASSERT_EQ(evil->save(key, "evil binary", nullptr).status, SaveStatus::stored);
  }
  fs::rename(root, base / "moved");
  fs::create_directory_symlink(base / "evil", root);
  const LoadResult loaded = store->load(key);
  EXPECT_EQ(loaded.status, LoadStatus::hit) << loaded.reason;
  EXPECT_EQ(loaded.binary, "real binary");  // through the held root, not the path
  EXPECT_EQ(store->save(key_of(2), "new", nullptr).status, SaveStatus::stored);
  const std::string hex = key_of(2).hex();
  const fs::path relative = fs::path(hex.substr(0, 2)) / hex.substr(2, 2) / (hex + ".entry");
  EXPECT_TRUE(fs::exists(base / "moved" / relative));
  EXPECT_FALSE(fs::exists(base / "evil" / relative));
}

TEST_F(StoreTrust, RootBelowAFolderOthersCanWriteIsRefusedUnlessSticky) {
  const fs::path shared = base / "shared";
  fs::create_directories(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  root = shared / "me" / "cache";
  std::string error;
  EXPECT_EQ(DiskStore::open(root, {}, &error), nullptr);
  EXPECT_NE(error.find(shared.string()), std::string::npos) << error;
  EXPECT_NE(error.find("writable by other users"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(shared / "me"));
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);  // sticky, as /tmp: only owners may rename
  EXPECT_NE(DiskStore::open(root, {}, &error), nullptr) << error;
}

TEST_F(StoreTrust, RootBelowAnotherUsersFolderIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "another user's folder needs root (chown)";
  const fs::path theirs = base / "theirs";
  fs::create_directories(theirs / "cache");
  ASSERT_EQ(::chown(theirs.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chmod(theirs.c_str(), 0755), 0);
  root = theirs / "cache";
  std::string error;
  EXPECT_EQ(DiskStore::open(root, {}, &error), nullptr);
  EXPECT_NE(error.find("belongs to uid 65534"), std::string::npos) << error;
}

// --- issue 15.8: exact modes, per-user fallback ------------------------------------------------

TEST_F(StoreTrust, EverythingCreatedHasExactModesWhateverTheUmask) {
  for (const mode_t mask : {mode_t{0}, mode_t{0277}}) {
    std::error_code ignored;
    fs::remove_all(root, ignored);
    const int status = in_child([&] {
      ::umask(mask);
      std::string error;
      auto store = DiskStore::open(root, {}, &error);
      if (!store) return 3;
      if (store->save(key_of(1), "binary", nullptr).status != SaveStatus::stored) return 4;
      KeyLock lock;
      if (store->lock_key(key_of(2), std::chrono::milliseconds(0), &lock)) return 5;
      count("hits", 1);
      if (!flush_stats(root)) return 6;
      if (store->load(key_of(1)).status != LoadStatus::hit) return 7;
      return 0;
    });
    ASSERT_EQ(status, 0) << std::oct << mask;
    int checked = 0;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
      struct stat st {};
      ASSERT_EQ(::lstat(it->path().c_str(), &st), 0);
      const mode_t expected = S_ISDIR(st.st_mode) ? 0700 : 0600;
      EXPECT_EQ(st.st_mode & 07777, expected) << it->path() << " under umask " << std::oct << mask;
      ++checked;
    }
    EXPECT_GE(checked, 8);  // root files, tmp/, locks/, shard folders, the entry, stats.json
    EXPECT_TRUE(fs::exists(root / "stats.json"));
  }
}

TEST_F(StoreTrust, NoHomeFallbackIsPerUser) {
  const int status = in_child([] {
    ::unsetenv("XDG_CACHE_HOME");
    ::unsetenv("HOME");
    const std::string expected = "/tmp/jitcache-" + std::to_string(::geteuid());
    return platform::default_cache_root() == expected ? 0 : 3;
  });
  EXPECT_EQ(status, 0);
}

// --- issue 15.11: an administrator's read-only shared cache; MAX_SIZE=0 ------------------------

TEST_F(StoreTrust, RootOwnedSharedCacheServesOtherUsersReadOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "a root-owned shared cache needs root to prepare";
  // The administrator prepares the cache as root and opens it to readers (docs/reliability.md).
  ASSERT_EQ(::chmod(base.c_str(), 0755), 0);
  {
    auto store = open_store();
    ASSERT_EQ(store->save(key_of(1), "shared binary", nullptr).status, SaveStatus::stored);
  }
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    ::chmod(it->path().c_str(), it->is_directory() ? 0755 : 0644);
  }
  ::chmod(root.c_str(), 0755);
  const int status = in_child([&] {
    if (!drop_to_nobody()) return 3;
    std::string error;
    if (DiskStore::open(root, {}, &error) != nullptr) return 4;  // writable use of root's cache: no
    if (error.find("JITCACHE_READ_ONLY") == std::string::npos) return 5;
    StoreLimits read_only;
    read_only.read_only = true;
    auto store = DiskStore::open(root, read_only, &error);
    if (!store) return 6;
    const LoadResult loaded = store->load(key_of(1));
    if (loaded.status != LoadStatus::hit || loaded.binary != "shared binary") return 7;
    return store->load(key_of(2)).status == LoadStatus::miss ? 0 : 8;
  });
  EXPECT_EQ(status, 0);
  // Root's cache with a file another user could write is refused like any other.
  ::chmod(entry_file(key_of(1), ".entry").c_str(), 0666);
  const int tampered = in_child([&] {
    if (!drop_to_nobody()) return 3;
    StoreLimits read_only;
    read_only.read_only = true;
    std::string error;
    auto store = DiskStore::open(root, read_only, &error);
    if (!store) return 4;
    return store->load(key_of(1)).status == LoadStatus::hit ? 5 : 0;
  });
  EXPECT_EQ(tampered, 0);
}

// The engine checks the root once: the settings open it to read jitcache.conf and hand that fd to
// the store. So the config and the entries come from one folder even when the path is swapped in
// between, and a refused root is still refused by the store, with its reason.
TEST_F(StoreTrust, SettingsHandTheRootTheyCheckedToTheStore) {
  auto store = open_store();
  write_file(root / "jitcache.conf", "max_size = 12345\n");
  ::chmod((root / "jitcache.conf").c_str(), 0600);
  store.reset();
  const int status = in_child([&] {
    ::unsetenv("JITCACHE_MAX_SIZE");
    ::setenv("JITCACHE_DIR", root.c_str(), 1);
    fileops::Dir checked;
    const Settings settings = load_settings(&checked);
    if (settings.max_size != 12345) return 3;
    // The path now names another folder: the store keeps using the one the config came from.
    fs::rename(root, base / "moved");
    std::string error;
    auto handed = DiskStore::open(settings.dir, StoreLimits{}, &error, &checked);
    if (!handed) return 4;
    if (handed->save(key_of(1), "binary", nullptr).status != SaveStatus::stored) return 5;
    if (fs::exists(root)) return 6;  // a second folder made at the old path
    return handed->load(key_of(1)).status == LoadStatus::hit ? 0 : 7;
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(fs::exists(base / "moved" / "CACHEDIR.TAG"));

  fs::rename(base / "moved", root);
  ::chmod(root.c_str(), 0777);  // refused: nothing is handed over, and the store says why
  const int refused = in_child([&] {
    ::setenv("JITCACHE_DIR", root.c_str(), 1);
    fileops::Dir checked;
    const Settings settings = load_settings(&checked);
    if (checked.is_open()) return 3;
    std::string error;
    if (DiskStore::open(settings.dir, StoreLimits{}, &error, &checked)) return 4;
    return error.find("writable by group or others") != std::string::npos ? 0 : 5;
  });
  EXPECT_EQ(refused, 0);
  ::chmod(root.c_str(), 0700);
}

TEST_F(StoreTrust, MaxSizeZeroMeansUnlimited) {
  StoreLimits limits;
  limits.max_size = 0;
  auto store = open_store(limits);
  for (std::uint64_t n = 0; n < 40; ++n) {
    const SaveResult saved = store->save(key_of(n), std::string(64 * 1024, static_cast<char>('a' + n % 26)), nullptr);
    ASSERT_EQ(saved.status, SaveStatus::stored) << saved.reason;
    EXPECT_EQ(saved.evicted_entries, 0u);
  }
  EXPECT_EQ(store->size().entries, 40u);
  const int status = in_child([&] {
    ::setenv("JITCACHE_DIR", root.c_str(), 1);
    ::setenv("JITCACHE_MAX_SIZE", "0", 1);
    const Settings settings = load_settings();
    return settings.max_size == 0 && settings.problems.empty() ? 0 : 3;
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace jitcache
