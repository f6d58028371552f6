// Paths a user gives the `jitcache` tool, and the files it believes for identity: the real tool
// binary against a real store. An output name someone planted as a link, FIFO or device node is
// refused and left as it is; an input that is a FIFO, a device or huge is refused at once; a CA
// file another user could replace is refused and `doctor` says so. The tests run as root in CI
// (the attacks' victim); device nodes need root and are skipped without it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "hashing/digest.hpp"
#include "store/local/disk_store.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uid_t kNobody = 65534;

class ToolPaths : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path open_folder = tmp / "public";  // as /tmp: anyone may create names there
  Digest128 key = xxh3_128("tool paths entry");

  void SetUp() override {
    fs::create_directories(open_folder);
    ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
    ASSERT_EQ(::chmod(open_folder.c_str(), 01777), 0);
    std::string error;
    auto store = DiskStore::open(cache, StoreLimits{}, &error);
    ASSERT_TRUE(store) << error;
    ASSERT_EQ(store->save(key, "the entry's binary", nullptr).status, SaveStatus::stored);
  }

  // The tool with a bound: a wait without one would show as a kill (exit 128 + 9).
  RunResult tool(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
    args.insert(args.begin(), {JITCACHE_TOOL, "--dir", cache.string()});
    RunOptions options;
    options.env = env;
    options.unset = {"LD_PRELOAD", "JITCACHE_DIR", "JITCACHE_REMOTE", "JITCACHE_REMOTE_CA_FILE", "JITCACHE_PACK_KEYS"};
    options.timeout_s = 20;
    options.wait_for_capture_helpers = false;
    return run(args, options);
  }

  static bool is_root() { return ::geteuid() == 0; }
};

bool is_symlink_to(const fs::path& link, const fs::path& target) {
  std::error_code error;
  return fs::is_symlink(fs::symlink_status(link)) && fs::read_symlink(link, error) == target;
}

bool is_a_fifo(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

bool is_a_char_device(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// `show --extract` run by root once followed a link another user planted in /tmp and overwrote the
// file it pointed to, and blocked for ever on a FIFO.
TEST_F(ToolPaths, ShowExtractNeverWritesThroughALinkOrIntoAFifo) {
  const fs::path victim = tmp / "victim";
  write_text(victim, "precious");
  const fs::path planted = open_folder / "x";
  fs::create_symlink(victim, planted);
  if (is_root()) {
    ASSERT_EQ(::lchown(planted.c_str(), kNobody, kNobody), 0);
  }
  RunResult linked = tool({"show", key.hex(), "--extract", planted.string()});
  EXPECT_NE(linked.exit_code, 0) << linked.err;
  EXPECT_EQ(read_text(victim), "precious");
  EXPECT_TRUE(is_symlink_to(planted, victim));
  EXPECT_NE(linked.err.find("symbolic link"), std::string::npos) << linked.err;

  const fs::path fifo = open_folder / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  RunResult fifo_run = tool({"show", key.hex(), "--extract", fifo.string()});
  EXPECT_NE(fifo_run.exit_code, 0) << fifo_run.err;
  EXPECT_NE(fifo_run.exit_code, 128 + 9) << "waited on the FIFO until killed";
  EXPECT_TRUE(is_a_fifo(fifo));

  // A regular file of the user's is replaced whole (not written through: its old inode is kept by
  // whoever has it open), and a new name is created.
  const fs::path mine = tmp / "mine.bin";
  write_text(mine, std::string(100, 'o'));
  RunResult replaced = tool({"show", key.hex(), "--extract", mine.string()});
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_EQ(read_text(mine), "the entry's binary");
  RunResult fresh = tool({"show", key.hex(), "--extract", (tmp / "new.bin").string()});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(read_text(tmp / "new.bin"), "the entry's binary");
}

// `pack create -o /dev/full` (root) renamed its temp file over the device node.
TEST_F(ToolPaths, PackCreateReplacesOnlyARegularFile) {
  const fs::path victim = tmp / "victim";
  write_text(victim, "precious");
  const fs::path link = open_folder / "pack-link";
  fs::create_symlink(victim, link);
  RunResult linked = tool({"pack", "create", "--no-wait", "-o", link.string()});
  EXPECT_NE(linked.exit_code, 0) << linked.out;
  EXPECT_TRUE(is_symlink_to(link, victim));
  EXPECT_EQ(read_text(victim), "precious");

  const fs::path fifo = open_folder / "pack-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  RunResult fifo_run = tool({"pack", "create", "--no-wait", "-o", fifo.string()});
  EXPECT_NE(fifo_run.exit_code, 0);
  EXPECT_TRUE(is_a_fifo(fifo));

  if (is_root()) {  // a node like /dev/full, made here so that nothing of the machine's is at stake
    const fs::path device = open_folder / "full";
    ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
    RunResult device_run = tool({"pack", "create", "--no-wait", "-o", device.string()});
    EXPECT_NE(device_run.exit_code, 0);
    EXPECT_TRUE(is_a_char_device(device)) << "the device node was replaced";
    EXPECT_NE(device_run.err.find("not a regular file"), std::string::npos) << device_run.err;
  }
  // Nothing left behind beside the refused names.
  for (const auto& item : fs::directory_iterator(open_folder)) {
    EXPECT_EQ(item.path().filename().string().find(".tmp"), std::string::npos) << item.path();
  }

  const fs::path regular = tmp / "out.jcpack";
  write_text(regular, "an older pack");
  RunResult made = tool({"pack", "create", "--no-wait", "-o", regular.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  RunResult listed = tool({"pack", "ls", regular.string()});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(key.hex()), std::string::npos) << listed.out;
}

// `--keys-from` on a FIFO blocked for ever, on /dev/zero it grew without bound, and a line it could
// not read as a key was printed back (from a file the user may not otherwise read).
TEST_F(ToolPaths, InputsAreReadAsRegularFilesWithABound) {
  const fs::path fifo = open_folder / "keys-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  const fs::path out = tmp / "filtered.jcpack";
  RunResult fifo_run = tool({"pack", "create", "--no-wait", "--keys-from", fifo.string(), "-o", out.string()});
  ASSERT_NE(fifo_run.exit_code, 128 + 9) << "waited on the FIFO until killed";
  EXPECT_NE(fifo_run.exit_code, 0);
  EXPECT_NE(fifo_run.err.find("not a regular file"), std::string::npos) << fifo_run.err;
  RunResult sign_fifo = tool({"pack", "create", "--no-wait", "--sign", fifo.string(), "-o", out.string()});
  ASSERT_NE(sign_fifo.exit_code, 128 + 9) << "waited on the FIFO until killed";
  EXPECT_NE(sign_fifo.exit_code, 0);

  // A huge file (sparse: no disk is used) is refused unread, and none of it is echoed.
  const fs::path huge = tmp / "huge-keys";
  {
    std::ofstream(huge) << "secret line of a file\n";
  }
  fs::resize_file(huge, 64u << 20);
  RunResult huge_run = tool({"pack", "create", "--no-wait", "--keys-from", huge.string(), "-o", out.string()});
  EXPECT_EQ(huge_run.exit_code, 2) << huge_run.err;
  EXPECT_LT(huge_run.err.size(), 4096u);
  EXPECT_EQ(huge_run.err.find("secret line"), std::string::npos) << huge_run.err.substr(0, 200);

  const fs::path other = tmp / "not-keys";
  write_text(other, "root:$6$hash:19000:0:99999:7:::\n");
  RunResult other_run = tool({"pack", "create", "--no-wait", "--keys-from", other.string(), "-o", out.string()});
  EXPECT_EQ(other_run.exit_code, 2);
  EXPECT_EQ(other_run.err.find("$6$hash"), std::string::npos) << other_run.err;

  RunResult zero_run = tool({"pack", "create", "--no-wait", "--keys-from", "/dev/zero", "-o", out.string()});
  EXPECT_NE(zero_run.exit_code, 128 + 9) << "read /dev/zero until killed";
  EXPECT_NE(zero_run.exit_code, 0);
  EXPECT_FALSE(fs::exists(out));

  const fs::path keys = tmp / "keys";
  write_text(keys, key.hex() + "\n");
  RunResult good = tool({"pack", "create", "--no-wait", "--keys-from", keys.string(), "-o", out.string()});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_TRUE(fs::is_regular_file(out));
}

// JITCACHE_REMOTE_CA_FILE decides whose server an HTTPS remote believes. One that another user
// may replace (its folder is his, or it is writable by others) passed `doctor` ("answers") and let
// him answer at the remote's address with his own certificate.
TEST_F(ToolPaths, ACaFileOthersCouldReplaceIsRefusedAndDoctorFails) {
  const std::map<std::string, std::string> remote = {{"JITCACHE_REMOTE", "https://127.0.0.1:9/cache"}};
  auto doctor = [&](const fs::path& ca) {
    std::map<std::string, std::string> env = remote;
    env["JITCACHE_REMOTE_CA_FILE"] = ca.string();
    RunResult result = tool({"doctor", "--json"}, env);
    json report = json::parse(result.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << result.out << result.err;
    json found = nullptr;
    for (const json& item : report.value("checks", json::array())) {
      if (item.value("check", "") == "remote CA file") found = item;
    }
    EXPECT_NE(result.exit_code, 0);
    return found;
  };
  const fs::path own = tmp / "ca";
  fs::create_directories(own);
  ASSERT_EQ(::chmod(own.c_str(), 0755), 0);
  write_text(own / "ca.pem", "-----BEGIN CERTIFICATE-----\n");
  ASSERT_EQ(::chmod((own / "ca.pem").c_str(), 0666), 0);
  json writable = doctor(own / "ca.pem");
  ASSERT_FALSE(writable.is_null()) << "doctor does not check the CA file";
  EXPECT_EQ(writable["status"], "fail");
  EXPECT_NE(writable["detail"].get<std::string>().find("writable by group or others"), std::string::npos) << writable;

  if (!is_root()) GTEST_SKIP() << "a folder of another user needs root (chown)";
  const fs::path theirs = tmp / "theirs";
  fs::create_directories(theirs);
  write_text(theirs / "ca.pem", "-----BEGIN CERTIFICATE-----\n");
  ASSERT_EQ(::chmod((theirs / "ca.pem").c_str(), 0644), 0);
  ASSERT_EQ(::chown(theirs.c_str(), kNobody, kNobody), 0);
  json foreign = doctor(theirs / "ca.pem");
  ASSERT_FALSE(foreign.is_null());
  EXPECT_EQ(foreign["status"], "fail");
  EXPECT_NE(foreign["detail"].get<std::string>().find(theirs.string()), std::string::npos) << foreign;
}

}  // namespace
}  // namespace jitcache::testing
