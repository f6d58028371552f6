// Issue 28.4: relative path settings are made absolute once, against the directory the process
// started in (the environment's) or the cache directory (jitcache.conf's).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/absolute_paths.hpp"
#include "core/settings.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

TEST(AbsolutePaths, RelativeEntriesAreResolvedAgainstTheBase) {
  EXPECT_EQ(absolute_paths("cache", "/start", false), "/start/cache");
  EXPECT_EQ(absolute_paths("/abs/cache", "/start", false), "/abs/cache");
  EXPECT_EQ(absolute_paths("../up", "/start/here", false), "/start/up");
  EXPECT_EQ(absolute_paths("a.jcpack:/b.jcpack::c", "/s", true), "/s/a.jcpack:/b.jcpack::/s/c");
  EXPECT_EQ(absolute_paths("", "/s", false), "");
}

class AbsolutePathSettings : public ::testing::Test {
 protected:
  fs::path tmp = [] {
    std::string pattern = (fs::temp_directory_path() / "jitcache-paths-XXXXXX").string();
    return fs::path(::mkdtemp(pattern.data()));
  }();
  fs::path started_in = fs::current_path();
  void TearDown() override {
    fs::current_path(started_in);
    for (const char* name : {"JITCACHE_DIR", "JITCACHE_TRACE_DIR", "JITCACHE_PACKS", "JITCACHE_PACK_KEYS"}) {
      ::unsetenv(name);
    }
    fs::remove_all(tmp);
  }
};

TEST_F(AbsolutePathSettings, TheEnvironmentsAreFixedAtTheStartAndSurviveAChangeOfDirectory) {
  fs::current_path(tmp);
  ::setenv("JITCACHE_DIR", "cache", 1);
  ::setenv("JITCACHE_TRACE_DIR", "/abs/traces", 1);
  ::setenv("JITCACHE_PACKS", "p1.jcpack:/p2.jcpack", 1);
  make_path_variables_absolute();
  fs::create_directories(tmp / "elsewhere");
  fs::current_path(tmp / "elsewhere");
  const Settings settings = load_settings();
  EXPECT_EQ(settings.dir, tmp / "cache");
  EXPECT_EQ(settings.trace_dir, fs::path("/abs/traces"));
  EXPECT_EQ(settings.packs, (tmp / "p1.jcpack").string() + ":/p2.jcpack");
}

TEST_F(AbsolutePathSettings, TheConfigFilesAreRelativeToTheCacheDirectory) {
  const fs::path root = tmp / "cache";
  fs::create_directories(root);
  ::chmod(root.c_str(), 0700);
  std::ofstream(root / "jitcache.conf") << "trace_dir = traces-here\npack_keys = k.pem:/etc/k2.pem\n";
  ::setenv("JITCACHE_DIR", root.c_str(), 1);
  fs::current_path(tmp);
  const Settings settings = load_settings();
  EXPECT_EQ(settings.trace_dir, root / "traces-here");
  EXPECT_EQ(settings.pack_keys, (root / "k.pem").string() + ":/etc/k2.pem");
}

}  // namespace
}  // namespace jitcache
