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
  ::setenv("JITCACHE_TEST_B", "2", 1);
  ::setenv("JITCACHE_TEST_A", "1", 1);
  ::setenv("JITCACHE_TESTX", "x", 1);
  ::setenv("JITCACHE_OTHER", "o", 1);
  const auto matched = matching_environment(parse_env_patterns("JITCACHE_TEST_*,JITCACHE_TESTX"));
  EXPECT_EQ(matched, (std::vector<NameValue>{
                         {"JITCACHE_TESTX", "x"}, {"JITCACHE_TEST_A", "1"}, {"JITCACHE_TEST_B", "2"}}));
}

TEST(MatchingEnvironment, ExactPatternDoesNotMatchLongerName) {
  ::setenv("JITCACHE_EXACT_LONGER", "1", 1);
  ::unsetenv("JITCACHE_EXACT");
  EXPECT_TRUE(matching_environment({"JITCACHE_EXACT"}).empty());
  ::setenv("JITCACHE_EXACT", "", 1);
  EXPECT_EQ(matching_environment({"JITCACHE_EXACT"}), (std::vector<NameValue>{{"JITCACHE_EXACT", ""}}));
}

TEST(MatchingEnvironment, VariableMatchedByTwoPatternsAppearsOnce) {
  ::setenv("JITCACHE_TWICE", "v", 1);
  EXPECT_EQ(matching_environment({"JITCACHE_TWICE", "JITCACHE_TW*"}),
            (std::vector<NameValue>{{"JITCACHE_TWICE", "v"}}));
}

}  // namespace
}  // namespace jitcache
