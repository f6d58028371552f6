#include <cstdlib>

#include <gtest/gtest.h>

#include "hashing/environment.hpp"

namespace jitcache {
namespace {

TEST(ParseEnvPatterns, SplitsOnCommasAndWhitespace) {
  EXPECT_EQ(parse_env_patterns(" IGC_*, NEO_X ,,\tCUDA_CACHE_DISABLE  POCL_*"),
            (std::vector<std::string>{"IGC_*", "NEO_X", "CUDA_CACHE_DISABLE", "POCL_*"}));
  EXPECT_TRUE(parse_env_patterns("").empty());
  EXPECT_TRUE(parse_env_patterns(" , ,").empty());
}

TEST(MatchingEnvironment, ExactNamesAndPrefixesSortedByName) {
  ::setenv("ENVTEST_TEST_B", "2", 1);
  ::setenv("ENVTEST_TEST_A", "1", 1);
  ::setenv("ENVTEST_TESTX", "x", 1);
  ::setenv("ENVTEST_OTHER", "o", 1);
  const auto matched = matching_environment(parse_env_patterns("ENVTEST_TEST_*,ENVTEST_TESTX"));
  EXPECT_EQ(matched, (std::vector<NameValue>{
                         {"ENVTEST_TESTX", "x"}, {"ENVTEST_TEST_A", "1"}, {"ENVTEST_TEST_B", "2"}}));
}

TEST(MatchingEnvironment, ExactPatternDoesNotMatchLongerName) {
  ::setenv("ENVTEST_EXACT_LONGER", "1", 1);
  ::unsetenv("ENVTEST_EXACT");
  EXPECT_TRUE(matching_environment({"ENVTEST_EXACT"}).empty());
  ::setenv("ENVTEST_EXACT", "", 1);
  EXPECT_EQ(matching_environment({"ENVTEST_EXACT"}), (std::vector<NameValue>{{"ENVTEST_EXACT", ""}}));
}

TEST(MatchingEnvironment, VariableMatchedByTwoPatternsAppearsOnce) {
  ::setenv("ENVTEST_TWICE", "v", 1);
  EXPECT_EQ(matching_environment({"ENVTEST_TWICE", "ENVTEST_TW*"}),
            (std::vector<NameValue>{{"ENVTEST_TWICE", "v"}}));
}

// jitcache's own settings hold the remote password and the HMAC key: a pattern that names them
// (or "*") must never publish them into keys, sidecars, records or traces.
TEST(MatchingEnvironment, OwnSettingsNeverMatch) {
  ::setenv("JITCACHE_REMOTE_HMAC_KEY", "s3cret", 1);
  ::setenv("JITCACHE_REMOTE", "redis://:pw@host", 1);
  ::setenv("BinaryCacheTrace", "1", 1);
  ::setenv("ENVTEST_VISIBLE", "v", 1);
  for (const char* patterns : {"*", "JITCACHE_*", "JITCACHE_REMOTE_HMAC_KEY,JITCACHE_REMOTE", "Binary*"}) {
    for (const NameValue& variable : matching_environment(parse_env_patterns(patterns))) {
      EXPECT_NE(variable.first.rfind("JITCACHE_", 0), 0u) << patterns;
      EXPECT_NE(variable.first, "BinaryCacheTrace") << patterns;
    }
  }
  EXPECT_EQ(matching_environment({"ENVTEST_VISIBLE"}), (std::vector<NameValue>{{"ENVTEST_VISIBLE", "v"}}));
}

TEST(KeyedEnvironment, DriverFlagVariablesAreKeyedWhateverTheList) {
  ::setenv("POCL_EXTRA_BUILD_FLAGS", "-I/some/dir", 1);
  const auto keyed = keyed_environment({});
  EXPECT_EQ(keyed, (std::vector<NameValue>{{"POCL_EXTRA_BUILD_FLAGS", "-I/some/dir"}}));
  EXPECT_EQ(keyed_environment({"POCL_*"}).size(), matching_environment({"POCL_*"}).size());
  ::unsetenv("POCL_EXTRA_BUILD_FLAGS");
}

}  // namespace
}  // namespace jitcache
