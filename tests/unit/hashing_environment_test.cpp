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

// Issue 28.5: JITCACHE_ENV_KEYS='*' published every variable, tokens included, to the store, the
// remote and the traces. A name that looks like a secret is keyed only when listed whole.
TEST(MatchingEnvironment, SecretsAreKeyedOnlyWhenListedByTheirFullName) {
  ::setenv("ENVMIX_GITHUB_TOKEN", "ghp_x", 1);
  ::setenv("ENVMIX_AWS_SECRET_ACCESS_KEY", "s", 1);
  ::setenv("ENVMIX_DB_PASSWORD", "p", 1);
  ::setenv("ENVMIX_MYSQL_PWD", "p", 1);
  ::setenv("ENVMIX_API_KEY", "k", 1);
  ::setenv("ENVMIX_CODEGEN_LEVEL", "3", 1);
  auto names = [](const std::vector<NameValue>& matched) {
    std::vector<std::string> found;
    for (const auto& [name, value] : matched) {
      if (name.rfind("ENVMIX_", 0) == 0) found.push_back(name);
    }
    return found;
  };
  EXPECT_EQ(names(matching_environment({"*"})), std::vector<std::string>{"ENVMIX_CODEGEN_LEVEL"});
  EXPECT_EQ(names(matching_environment({"ENVMIX_*"})), std::vector<std::string>{"ENVMIX_CODEGEN_LEVEL"});
  EXPECT_EQ(names(matching_environment({"ENVMIX_*", "ENVMIX_API_KEY"})),
            (std::vector<std::string>{"ENVMIX_API_KEY", "ENVMIX_CODEGEN_LEVEL"}));
  ::setenv("NEOReadDebugKeys", "1", 1);  // a driver's codegen variable with "Keys" in its name
  EXPECT_EQ(matching_environment({"NEO*"}).size(), 1u);
}

// Issue 36.6: credentials under names no rule knew (a DSN, a proxy URL with a password, a CI job's
// JWT, SSHPASS) were keyed by '*' and so sent with every entry to the remote.
TEST(MatchingEnvironment, ValuesWithUrlCredentialsAndJwtSshpassDsnNamesAreSecrets) {
  ::setenv("ENVURL_DATABASE_URL", "postgres://app:pw@db/x", 1);
  ::setenv("ENVURL_HTTPS_PROXY", "http://u:pw@proxy:3128", 1);
  ::setenv("ENVURL_CI_JOB_JWT", "eyJ", 1);
  ::setenv("ENVURL_SSHPASS", "pw", 1);
  ::setenv("ENVURL_SENTRY_DSN", "x", 1);
  ::setenv("ENVURL_MIRROR", "https://mirror.example.org/path@v2", 1);  // an '@' in a path: no userinfo
  std::vector<std::string> found;
  for (const auto& [name, value] : matching_environment({"ENVURL_*"})) found.push_back(name);
  EXPECT_EQ(found, std::vector<std::string>{"ENVURL_MIRROR"});
  EXPECT_EQ(matching_environment({"ENVURL_DATABASE_URL"}).size(), 1u);  // named whole: the user's choice
}

// Credentials in values under names no rule knows: an Azure connection string, a webhook URL with
// its secret in the path, a JDBC URL's password, a SAS URL's signature, a Stripe or GitHub token.
// Beside a remote a prefix pattern would publish them.
TEST(MatchingEnvironment, ValuesHoldingCredentialsAreSecretsWhateverTheName) {
  ::setenv("ENVVAL_STORAGE", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==;EndpointSuffix=x", 1);
  ::setenv("ENVVAL_HOOK", "https://hooks.slack.com/services/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", 1);
  ::setenv("ENVVAL_JDBC", "jdbc:postgresql://db/x?user=app&password=pw", 1);
  ::setenv("ENVVAL_BLOB", "https://acct.blob.core.windows.net/c/f?sv=2020&sig=abc%3D", 1);
  ::setenv("ENVVAL_STRIPE", "sk_live_51H8abcdEFGH", 1);
  ::setenv("ENVVAL_GH", "ghp_0123456789abcdef", 1);
  // Codegen-looking values stay keyed: a level, a path, a version URL, a flag list.
  ::setenv("ENVVAL_LEVEL", "3", 1);
  ::setenv("ENVVAL_PATH", "/opt/pocl/lib/kernel-x86_64-pc-linux-gnu-haswell.bc", 1);
  ::setenv("ENVVAL_MIRROR", "https://deb.debian.org/debian/pool/main/p/pocl/v5.0-2", 1);
  ::setenv("ENVVAL_FLAGS", "-cl-fast-relaxed-math -DWIDTH=16", 1);
  std::vector<std::string> found;
  for (const auto& [name, value] : matching_environment({"ENVVAL_*"})) found.push_back(name);
  EXPECT_EQ(found, (std::vector<std::string>{"ENVVAL_FLAGS", "ENVVAL_LEVEL", "ENVVAL_MIRROR", "ENVVAL_PATH"}));
  EXPECT_EQ(matching_environment({"ENVVAL_HOOK"}).size(), 1u);  // named whole: the user's choice
}

}  // namespace
}  // namespace jitcache
