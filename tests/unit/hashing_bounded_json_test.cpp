#include <string>

#include <gtest/gtest.h>

#include "hashing/bounded_json.hpp"

namespace jitcache {
namespace {

TEST(BoundedJson, ParsesOrdinaryDocuments) {
  const auto parsed = parse_untrusted_json(R"({"a": [1, {"b": "x[{"}], "c": "\"]"})");
  ASSERT_FALSE(parsed.is_discarded());
  EXPECT_EQ(parsed["a"][1]["b"], "x[{");
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": "x[{\"[["}]})", 100), 3u);
}

TEST(BoundedJson, RefusesTooDeepTooLargeAndInvalid) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(parse_untrusted_json(deep).is_discarded());
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_FALSE(parse_untrusted_json(at_limit).is_discarded());
  EXPECT_TRUE(parse_untrusted_json("[" + at_limit + "]").is_discarded());
  EXPECT_TRUE(parse_untrusted_json(R"({"a": "0123456789"})", 10).is_discarded());
  EXPECT_TRUE(parse_untrusted_json("{\"a\": ").is_discarded());
  EXPECT_TRUE(parse_untrusted_json("").is_discarded());
  // Unbalanced closers cannot hide depth.
  EXPECT_TRUE(parse_untrusted_json("]]]]" + deep).is_discarded());
}

}  // namespace
}  // namespace jitcache
