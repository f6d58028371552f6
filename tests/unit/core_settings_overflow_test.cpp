// Size and duration values too large for 64 bits are rejected (the default is used and a problem
// reported) instead of wrapping around to a small limit that would evict everything.
#include <gtest/gtest.h>

#include "core/settings.hpp"

namespace jitcache {
namespace {

TEST(SettingsOverflow, HugeSizesAreRejectedNotWrapped) {
  EXPECT_EQ(parse_size("16777215T"), std::optional<std::uint64_t>(((1ull << 24) - 1) << 40));
  EXPECT_EQ(parse_size("16777216T"), std::nullopt);
  EXPECT_EQ(parse_size("999999999999999999g"), std::nullopt);
  EXPECT_EQ(parse_size("18446744073"), std::optional<std::uint64_t>(18446744073ull));
}

TEST(SettingsOverflow, HugeDurationsAreRejectedNotWrapped) {
  EXPECT_EQ(parse_duration_s("999999999999999w"), std::nullopt);
  EXPECT_EQ(parse_duration_s("52w"), std::optional<std::uint64_t>(52ull * 7 * 86400));
}

}  // namespace
}  // namespace jitcache
