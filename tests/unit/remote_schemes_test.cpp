// The registered remote schemes (store/remote/remote_schemes.cpp): each row reads its own URLs,
// the refusal of an unknown scheme names them, and the settings a row names are rows of the
// settings table (a secret one a Secret row).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/settings.hpp"
#include "store/remote/remote_schemes.hpp"

namespace jitcache {
namespace {

TEST(RemoteSchemes, EachRowReadsItsOwnExample) {
  ASSERT_FALSE(remote_schemes().empty());
  for (const RemoteScheme* scheme : remote_schemes()) {
    std::string error;
    std::unique_ptr<RemoteEndpoint> endpoint = parse_remote_url(remote_schemes(), scheme->example, &error);
    ASSERT_TRUE(endpoint) << scheme->example << ": " << error;
    EXPECT_EQ(endpoint->scheme, scheme) << scheme->example;
    EXPECT_TRUE(endpoint->redacted().starts_with(scheme->name)) << endpoint->redacted();
    EXPECT_FALSE(scheme->advice.empty()) << scheme->name;
  }
}

TEST(RemoteSchemes, AnUnknownSchemeIsRefusedNamingTheRegisteredOnes) {
  std::string error;
  EXPECT_FALSE(parse_remote_url(remote_schemes(), "gs://bucket/jit", &error));
  EXPECT_NE(error.find("unsupported scheme 'gs'"), std::string::npos) << error;
  for (const RemoteScheme* scheme : remote_schemes()) {
    EXPECT_NE(error.find(scheme->name), std::string::npos) << error;
  }
}

TEST(RemoteSchemes, TheSettingsOfARowAreRowsOfTheSettingsTable) {
  const std::vector<SettingDefinition>& table = setting_definitions();
  std::size_t named = 0;
  for (const RemoteScheme* scheme : remote_schemes()) {
    for (std::string_view key : scheme->settings) {
      ++named;
      auto row = std::find_if(table.begin(), table.end(), [&](const SettingDefinition& d) { return d.key == key; });
      EXPECT_NE(row, table.end()) << scheme->name << " names " << key << ", which is no setting";
    }
  }
  EXPECT_GT(named, 0u);  // HTTP's bearer token at least
  EXPECT_EQ(redacted_setting("remote_bearer_token", "tok-123"), "***");
  EXPECT_EQ(redacted_setting("remote_hmac_key", "k"), "***");
  EXPECT_EQ(redacted_setting("remote_prefix", "team"), "team");
}

}  // namespace
}  // namespace jitcache
