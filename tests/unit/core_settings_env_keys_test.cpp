// env_keys beside a remote (core/settings.cpp): a bare '*' would send the whole environment with
// every entry to a server others read (issue 36.6).
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "core/settings.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

class EnvKeysSettings : public ::testing::Test {
 protected:
  fs::path tmp = [] {
    std::string pattern = (fs::temp_directory_path() / "jitcache-env-keys-XXXXXX").string();
    return fs::path(::mkdtemp(pattern.data()));
  }();
  void SetUp() override { ::setenv("JITCACHE_DIR", (tmp / "cache").c_str(), 1); }
  void TearDown() override {
    for (const char* name : {"JITCACHE_DIR", "JITCACHE_ENV_KEYS", "JITCACHE_REMOTE"}) ::unsetenv(name);
    fs::remove_all(tmp);
  }
  static long warnings_about_star(const Settings& settings) {
    return std::count_if(settings.problems.begin(), settings.problems.end(),
                         [](const std::string& problem) { return problem.find("bare '*'") != std::string::npos; });
  }
};

TEST_F(EnvKeysSettings, ABareStarIsDroppedWithOneWarningWhenARemoteIsSet) {
  ::setenv("JITCACHE_ENV_KEYS", "POCL_*,*,MY_FLAG", 1);
  ::setenv("JITCACHE_REMOTE", "http://cache.example.org/jit", 1);
  const Settings settings = load_settings();
  EXPECT_EQ(settings.env_patterns, "POCL_*,MY_FLAG");
  EXPECT_EQ(warnings_about_star(settings), 1);
}

TEST_F(EnvKeysSettings, ABareStarStaysWithoutARemote) {
  ::setenv("JITCACHE_ENV_KEYS", "*", 1);
  const Settings settings = load_settings();
  EXPECT_EQ(settings.env_patterns, "*");
  EXPECT_EQ(warnings_about_star(settings), 0);
}

}  // namespace
}  // namespace jitcache
