// The one rule for what jitcache runs or believes outside a cache root (store/files/trusted_file.hpp),
// the shared-object check before dlopen (core/library_check.hpp) and what a capture helper
// inherits of the app's environment (capture/helper_environment.hpp). Issue 28 items 1-3 and 6.
// Tests run as root in CI: another user's file is faked with chown to 65534.
#include <gtest/gtest.h>

#include "../elf_segments.hpp"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "capture/helper_environment.hpp"
#include "core/library_check.hpp"
#include "store/files/trusted_file.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;
using testing::mapped_end;



// A private folder next to the test binary (in the build tree) and one in /tmp (sticky and open to
// all).
class TrustedFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path parent = fs::read_symlink("/proc/self/exe").parent_path() / "trusted-tmp";
    fs::create_directories(parent);
    fs::permissions(parent, fs::perms::owner_all);
    std::string pattern = (parent / "trusted-file-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    here = pattern;
    std::string reason;
    if (resolve_trusted_file(write(here / "probe", "x"), &reason) == std::nullopt) {
      GTEST_SKIP() << "the build tree is not a trusted place for code: " << reason;
    }
    pattern = (fs::temp_directory_path() / "trusted-file-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    in_tmp = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(here, ignored);
    if (!in_tmp.empty()) fs::remove_all(in_tmp, ignored);
  }

  static fs::path write(const fs::path& path, const std::string& text, fs::perms mode = fs::perms(0644)) {
    std::ofstream(path, std::ios::binary) << text;
    fs::permissions(path, mode);
    return path;
  }

  std::string refusal(const fs::path& path) {
    std::string why;
    EXPECT_EQ(resolve_trusted_file(path, &why), std::nullopt) << path;
    return why;
  }

  fs::path here, in_tmp;
};

TEST_F(TrustedFile, AFileOfThisUserInPrivateFoldersIsTrusted) {
  const fs::path file = write(here / "tool", "#!/bin/sh\n", fs::perms(0755));
  std::string why;
  EXPECT_EQ(resolve_trusted_file(file, &why), fs::canonical(file)) << why;
}

TEST_F(TrustedFile, ARelativePathIsRefusedWhateverItNames) {
  const fs::path relative = fs::relative(write(here / "key.pem", "k"), fs::current_path());
  ASSERT_TRUE(relative.is_relative());
  EXPECT_NE(refusal(relative).find("is not an absolute path"), std::string::npos);
}

TEST_F(TrustedFile, AFileOthersMayWriteOrAnotherUsersIsRefused) {
  const fs::path open = write(here / "open.pem", "k", fs::perms(0666));
  EXPECT_NE(refusal(open).find("writable by group or others (mode 0666)"), std::string::npos);
  const fs::path group = write(here / "group.pem", "k", fs::perms(0664));
  EXPECT_NE(refusal(group).find("(mode 0664)"), std::string::npos);
  const fs::path foreign = write(here / "foreign.pem", "k");
  ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  EXPECT_NE(refusal(foreign).find("owned by uid 65534"), std::string::npos);
}

TEST_F(TrustedFile, AFolderOnTheWayThatOthersMayWriteOrOwnIsRefused) {
  fs::create_directory(here / "open");
  fs::permissions(here / "open", fs::perms(0777));
  const fs::path in_open = write(here / "open" / "key.pem", "k");
  const std::string why = refusal(in_open);
  EXPECT_NE(why.find("is writable by other users (mode 777, no sticky bit)"), std::string::npos);
  EXPECT_EQ(why.find("cache folder"), std::string::npos) << why;  // a key or a program is no cache (issue 36.7)
  fs::create_directory(here / "theirs");
  const fs::path in_theirs = write(here / "theirs" / "key.pem", "k");
  ASSERT_EQ(::chown((here / "theirs").c_str(), 65534, 65534), 0);
  EXPECT_NE(refusal(in_theirs).find("belongs to uid 65534"), std::string::npos);
}

// A sticky folder (/tmp) keeps others from renaming or removing what is ours (issue 36 item 8: a
// clone under /tmp runs its own helper); a folder of another user's in it is refused.
TEST_F(TrustedFile, AStickyFolderIsEnoughButAFolderAnotherUserMadeInItIsNot) {
  const fs::path file = write(in_tmp / "jitcache", "#!/bin/sh\n", fs::perms(0755));
  std::string why;
  EXPECT_EQ(resolve_trusted_file(file, &why), fs::canonical(file)) << why;
  fs::create_directory(in_tmp / "bin");
  const fs::path planted = write(in_tmp / "bin" / "jitcache", "#!/bin/sh\n", fs::perms(0755));
  ASSERT_EQ(::chown((in_tmp / "bin").c_str(), 65534, 65534), 0);
  EXPECT_NE(refusal(planted).find("belongs to uid 65534"), std::string::npos);
}

// The target is what is checked and returned; the link's folders are checked too.
TEST_F(TrustedFile, ASymlinkIsResolvedOnceAndBothItsFoldersAreChecked) {
  const fs::path target = write(here / "real-tool", "#!/bin/sh\n", fs::perms(0755));
  fs::create_symlink(target, here / "tool");
  std::string why;
  EXPECT_EQ(resolve_trusted_file(here / "tool", &why), fs::canonical(target)) << why;
  fs::create_directory(in_tmp / "theirs");
  fs::create_symlink(target, in_tmp / "theirs" / "tool");
  ASSERT_EQ(::chown((in_tmp / "theirs").c_str(), 65534, 65534), 0);
  EXPECT_NE(refusal(in_tmp / "theirs" / "tool").find("belongs to uid 65534"), std::string::npos);
  const fs::path elsewhere = write(in_tmp / "theirs" / "real-tool", "#!/bin/sh\n", fs::perms(0755));
  fs::create_symlink(elsewhere, here / "to-theirs");
  EXPECT_NE(refusal(here / "to-theirs").find("belongs to uid 65534"), std::string::npos);
}

TEST_F(TrustedFile, AFifoOrAFolderIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((here / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(refusal(here / "fifo").empty());
  fs::create_directory(here / "folder");
  EXPECT_FALSE(refusal(here / "folder").empty());
}

// What the loader would map past the end of a file faults (SIGBUS): refused before dlopen.
TEST_F(TrustedFile, ATruncatedOrForeignSharedObjectIsNotLoadable) {
  const std::string real = [] {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::string why;
  // The test binary is a PIE (ET_DYN) like any shared object.
  const fs::path whole = write(here / "whole.so", real, fs::perms(0755));
  EXPECT_NE(check_loadable_library(whole, &why), std::nullopt) << why;
  for (std::size_t size : {std::size_t{0}, std::size_t{40}, std::size_t{200}, mapped_end(real) / 2, mapped_end(real) - 1}) {
    const fs::path cut = write(here / ("cut-" + std::to_string(size) + ".so"), real.substr(0, size), fs::perms(0755));
    EXPECT_EQ(check_loadable_library(cut, &why), std::nullopt) << size;
    EXPECT_FALSE(why.empty());
  }
  const fs::path text = write(here / "text.so", "not a shared object", fs::perms(0755));
  EXPECT_EQ(check_loadable_library(text, &why), std::nullopt);
  EXPECT_NE(why.find("not an ELF file"), std::string::npos) << why;
  const fs::path open = write(here / "open.so", real, fs::perms(0777));
  EXPECT_EQ(check_loadable_library(open, &why), std::nullopt);
  EXPECT_NE(why.find("writable by group or others"), std::string::npos) << why;
}

TEST(HelperEnvironment, KeepsWhatFindsTheDriverAndStoresDropsTheRest) {
  for (const char* kept : {"JITCACHE_DIR", "JITCACHE_REMOTE_PASSWORD", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES",
                           "POCL_DEVICES", "POCL_CACHE_DIR", "RUSTICL_ENABLE", "ZE_ENABLE_ALT_DRIVERS", "PATH", "HOME",
                           "TMPDIR", "XDG_CACHE_HOME", "LD_LIBRARY_PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES"}) {
    EXPECT_TRUE(helper_keeps_variable(kept)) << kept;
  }
  for (const char* dropped : {"LD_PRELOAD", "OPENCL_LAYERS", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "SSH_AUTH_SOCK",
                              "PATHX", "HOMEDIR", "DISPLAY", "PYTHONPATH"}) {
    EXPECT_FALSE(helper_keeps_variable(dropped)) << dropped;
  }
  std::string a = "POCL_DEVICES=cpu", b = "API_TOKEN=secret", c = "LD_PRELOAD=/x.so", d = "malformed", e = "=C:";
  char* environment[] = {a.data(), b.data(), c.data(), d.data(), e.data(), nullptr};
  EXPECT_EQ(helper_environment(environment), std::vector<std::string>{"POCL_DEVICES=cpu"});
}

}  // namespace
}  // namespace jitcache
