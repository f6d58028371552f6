// The settings of a remote: env_keys beside one (core/settings.cpp: a bare '*' would send the whole
// environment with every entry to a server others read, issue 36.6), and a remote listed twice
// (core/remote_tier.cpp), and what reaches a remote's client of the settings its scheme names.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "core/remote_tier.hpp"
#include "core/settings.hpp"
#include "store/remote/remote_schemes.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

class RemoteSettings : public ::testing::Test {
 protected:
  fs::path tmp = [] {
    std::string pattern = (fs::temp_directory_path() / "jitcache-env-keys-XXXXXX").string();
    return fs::path(::mkdtemp(pattern.data()));
  }();
  void SetUp() override { ::setenv("JITCACHE_DIR", (tmp / "cache").c_str(), 1); }
  void TearDown() override {
    for (const char* name : {"JITCACHE_DIR", "JITCACHE_ENV_KEYS", "JITCACHE_REMOTE", "JITCACHE_REMOTE_BEARER_TOKEN"}) {
      ::unsetenv(name);
    }
    fs::remove_all(tmp);
  }
  static long warnings_about_star(const Settings& settings) {
    return std::count_if(settings.problems.begin(), settings.problems.end(),
                         [](const std::string& problem) { return problem.find("bare '*'") != std::string::npos; });
  }
};

TEST_F(RemoteSettings, ABareStarIsDroppedWithOneWarningWhenARemoteIsSet) {
  ::setenv("JITCACHE_ENV_KEYS", "POCL_*,*,MY_FLAG", 1);
  ::setenv("JITCACHE_REMOTE", "http://cache.example.org/jit", 1);
  const Settings settings = load_settings();
  EXPECT_EQ(settings.env_patterns, "POCL_*,MY_FLAG");
  EXPECT_EQ(warnings_about_star(settings), 1);
}

TEST_F(RemoteSettings, ABareStarStaysWithoutARemote) {
  ::setenv("JITCACHE_ENV_KEYS", "*", 1);
  const Settings settings = load_settings();
  EXPECT_EQ(settings.env_patterns, "*");
  EXPECT_EQ(warnings_about_star(settings), 0);
}

TEST_F(RemoteSettings, ARemoteListedTwiceIsAskedOnceWithAWarning) {
  ::setenv("JITCACHE_REMOTE", "file:///srv/jit|http://cache.example.org/jit file:///srv/jit/", 1);
  std::vector<RemoteConfig> configs;
  bool read_only = false;
  std::chrono::milliseconds lease_wait{0};
  const std::string problem = remote_configs_from(load_settings(), remote_schemes(), &configs, &read_only, &lease_wait);
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].endpoint->redacted(), "file:///srv/jit");
  EXPECT_EQ(configs[1].endpoint->redacted(), "http://cache.example.org:80/jit");
  EXPECT_NE(problem.find("remote 3 (file:///srv/jit) is listed before"), std::string::npos) << problem;
}

// A scheme's own setting (HTTP's bearer token) reaches the clients of that scheme only, and is
// shown as *** (a Secret row of the table).
TEST_F(RemoteSettings, ASchemesOwnSettingReachesOnlyItsClients) {
  ::setenv("JITCACHE_REMOTE", "redis://cache.example.org|https://cache.example.org/jit", 1);
  ::setenv("JITCACHE_REMOTE_BEARER_TOKEN", "tok-123", 1);
  std::vector<RemoteConfig> configs;
  bool read_only = false;
  std::chrono::milliseconds lease_wait{0};
  const Settings settings = load_settings();
  const std::string problem = remote_configs_from(settings, remote_schemes(), &configs, &read_only, &lease_wait);
  ASSERT_EQ(configs.size(), 2u) << problem;
  EXPECT_TRUE(configs[0].scheme_settings.empty());
  EXPECT_EQ(configs[1].scheme_setting("remote_bearer_token"), "tok-123");
  EXPECT_EQ(redacted_setting("remote_bearer_token", settings.remote_bearer_token), "***");
}

}  // namespace
}  // namespace jitcache
