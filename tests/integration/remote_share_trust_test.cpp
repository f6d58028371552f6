// A signed, world-writable shared directory (file:// remote) against an outsider who shares the
// machine: what he plants at a key's lease or entry name costs nobody a wait and never the whole
// remote. Two users beside root are made for the test (useradd) and removed after it; the cases
// that need them are skipped where they cannot be made.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>

#include "remote_clients.hpp"
#include "store/files/file_ops.hpp"
#include "store/remote/file_remote.hpp"
#include "store/remote/signed_entry.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

// A user made for one test with useradd (no home, no login), removed at the end.
class ThrowAwayUser {
 public:
  ThrowAwayUser() {
    if (::geteuid() != 0) return;
    std::random_device random;
    name_ = "jct" + std::to_string(random() % 1000000);
    const std::string command = "useradd -M -N -s /usr/sbin/nologin " + name_ + " >/dev/null 2>&1";
    if (std::system(command.c_str()) != 0) {
      name_.clear();
      return;
    }
    if (const passwd* user = ::getpwnam(name_.c_str())) uid_ = user->pw_uid, gid_ = user->pw_gid;
  }
  ~ThrowAwayUser() {
    if (!name_.empty()) (void)std::system(("userdel " + name_ + " >/dev/null 2>&1").c_str());
  }
  ThrowAwayUser(const ThrowAwayUser&) = delete;
  ThrowAwayUser& operator=(const ThrowAwayUser&) = delete;
  bool made() const { return uid_ != static_cast<uid_t>(-1); }
  uid_t uid() const { return uid_; }

  // Runs `body` in a child process as this user, with a watchdog; its exit status, or 128 + signal.
  int run(const std::function<int()>& body) const {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::alarm(60);
      if (::setgroups(0, nullptr) != 0 || ::setgid(gid_) != 0 || ::setuid(uid_) != 0) ::_exit(99);
      ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }

 private:
  std::string name_;
  uid_t uid_ = static_cast<uid_t>(-1);
  gid_t gid_ = static_cast<gid_t>(-1);
};

const Digest128 kKey{0x2222, 2};
const Digest128 kFifoKey{0x2222, 3};
const Digest128 kFolderKey{0x2222, 4};
const Digest128 kNeighbour{0x2222, 5};

class SignedShareTrust : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path shared = tmp / "shared";

  void SetUp() override {
    fs::create_directories(shared);
    ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  }

  RemoteConfig config(const std::string& hmac_key = "team-secret") const {
    RemoteConfig config;
    config.endpoint = endpoint_of("file://" + shared.string());
    config.hmac_key = hmac_key;
    config.command_timeout = std::chrono::milliseconds(5000);  // generous: the CI machine is busy
    config.backoff = std::chrono::hours(1);
    return config;
  }
};

// Every folder of `relative`'s parent made as the caller, open to all and sticky (as an outsider
// who came first makes them: his, 1777).
bool make_open_folders(const fs::path& base, const fs::path& relative) {
  fs::path folder = base;
  for (const fs::path& step : relative.parent_path()) {
    folder /= step;
    if (::mkdir(folder.c_str(), 01777) != 0 && errno != EEXIST) return false;
    if (::chmod(folder.c_str(), 01777) != 0) return false;
  }
  return true;
}

// Issue 51 item 1: in a signed world-writable share, a lease whose tag does not verify is garbage,
// but when it could not be removed (the outsider's file in his sticky leases/ folder, a FIFO, a
// folder) the key counted as held: every run waited remote_lease_wait per key. Now such a file
// never holds the key: the lease is taken under a second name only key holders can derive, and it
// is exclusive there as it is under the first.
TEST_F(SignedShareTrust, ALeaseThatDoesNotVerifyNeverHoldsTheKeyEvenWhenItCannotBeRemoved) {
  ThrowAwayUser outsider, member;
  if (!outsider.made() || !member.made()) GTEST_SKIP() << "needs root and useradd to act as two other users";
  const RemoteConfig signing = config();
  const auto layout = client_of<FileRemote>(signing);
  ASSERT_EQ(outsider.run([&] {
              const std::int64_t soon_ms = fileops::now_ns() / 1000000 + 30000;
              const fs::path lease = shared / layout.lease_path(kKey);
              if (!make_open_folders(shared, layout.lease_path(kKey))) return 1;
              std::ofstream(lease) << "x " << soon_ms << " 0000";
              if (::mkfifo((shared / layout.lease_path(kFifoKey)).c_str(), 0666) != 0) return 2;
              if (::mkdir((shared / layout.lease_path(kFolderKey)).c_str(), 0755) != 0) return 3;
              return 0;
            }),
            0);
  for (const Digest128& key : {kKey, kFifoKey, kFolderKey}) {
    EXPECT_EQ(member.run([&] {
                auto first = client_of<FileRemote>(signing), second = client_of<FileRemote>(signing);
                const auto started = std::chrono::steady_clock::now();
                if (first.acquire_lease(key, "token-first").status != RemoteStatus::ok) return 1;
                if (std::chrono::steady_clock::now() - started > std::chrono::seconds(3)) return 2;
                if (second.lease_exists(key).status != RemoteStatus::ok) return 3;
                if (second.acquire_lease(key, "token-second").status != RemoteStatus::miss) return 4;
                if (first.release_lease(key, "token-first").status != RemoteStatus::ok) return 5;
                if (second.lease_exists(key).status != RemoteStatus::miss) return 6;
                if (second.acquire_lease(key, "token-second").status != RemoteStatus::ok) return 7;
                return 0;
              }),
              0)
        << key.hex()
        << ": 1: the planted file holds the key, 2: slow, 3/4: the lease taken is not seen or not "
           "exclusive, 5: not released, 6: still held, 7: not taken again";
  }
  EXPECT_TRUE(fs::exists(shared / layout.lease_path(kKey)));  // the outsider's file: not ours to remove
}

// When both names are blocked (the outsider learned the second one from a listing), the key is
// built without a lease, at once, with a notice saying so: never a wait.
TEST_F(SignedShareTrust, WhenBothLeaseNamesAreBlockedTheKeyIsBuiltWithoutALease) {
  ThrowAwayUser outsider, member;
  if (!outsider.made() || !member.made()) GTEST_SKIP() << "needs root and useradd to act as two other users";
  const RemoteConfig signing = config();
  const auto layout = client_of<FileRemote>(signing);
  ASSERT_FALSE(layout.second_lease_path(kKey).empty());
  ASSERT_EQ(outsider.run([&] {
              if (!make_open_folders(shared, layout.lease_path(kKey))) return 1;
              for (const std::string& name : {layout.lease_path(kKey), layout.second_lease_path(kKey)}) {
                if (::mkfifo((shared / name).c_str(), 0666) != 0) return 2;
              }
              return 0;
            }),
            0);
  EXPECT_EQ(member.run([&] {
              auto remote = client_of<FileRemote>(signing);
              RemoteResult taken = remote.acquire_lease(kKey, "token");
              if (taken.status != RemoteStatus::ok) return 1;
              if (taken.notice.find("without a lease") == std::string::npos) return 2;
              if (remote.release_lease(kKey, "token").status != RemoteStatus::miss) return 3;
              return 0;
            }),
            0)
      << "1: waited (held), 2: no notice, 3: released something";
}

// Bytes this process has read through read(2)/pread(2), all threads (/proc/self/io).
std::uint64_t bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string name;
  std::uint64_t value = 0;
  while (io >> name >> value) {
    if (name == "rchar:") return value;
  }
  return 0;
}

// Issue 51 item 2: a huge file with a valid header for a real key (the header's sizes match the
// file) was read whole by every lookup, and past the remote's deadline it was a timeout of the
// whole remote. In a signed share the entry's size is signed and checked before its body is read.
TEST_F(SignedShareTrust, AWholeLookingOversizeEntryIsRefusedBeforeItsBodyIsRead) {
  auto remote = client_of<FileRemote>(config());
  ASSERT_EQ(remote.save(kNeighbour, "neighbour", nlohmann::json::object()).status, RemoteStatus::ok);
  const fs::path entry = shared / remote.record_path(kKey);
  fs::create_directories(entry.parent_path());
  const std::string body(48u << 20, 'z');
  for (const std::string& planter_key : {std::string(), std::string("another-secret")}) {
    write_text(entry, encode_shared_entry(kKey, body, nlohmann::json::object(), planter_key));
    const std::uint64_t before = bytes_read_so_far();
    RemoteResult planted = remote.load(kKey);
    EXPECT_TRUE(planted.status == RemoteStatus::bad_hmac || planted.status == RemoteStatus::corrupt)
        << to_string(planted.status) << ": " << planted.reason;
    EXPECT_LT(bytes_read_so_far() - before, 1u << 20) << "the body was read";
    RemoteResult other = remote.load(kNeighbour);  // the remote goes on for the other keys
    ASSERT_EQ(other.status, RemoteStatus::ok) << other.reason;
  }
  // A signed entry of that size is read and served.
  ASSERT_EQ(remote.save(kKey, body, nlohmann::json::object()).status, RemoteStatus::ok);
  RemoteResult real = remote.load(kKey);
  ASSERT_EQ(real.status, RemoteStatus::ok) << real.reason;
  EXPECT_EQ(real.binary.size(), body.size());
}

}  // namespace
}  // namespace jitcache::testing
