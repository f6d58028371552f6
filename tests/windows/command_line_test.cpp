// jitcache-run.exe rebuilds the app's command line from its arguments: each one must come back
// unchanged when the app's C runtime splits the line again.
#include <gtest/gtest.h>

#include "shim/windows/command_line.hpp"

namespace jitcache::windows {
namespace {

TEST(QuoteArgument, LeavesPlainArgumentsAlone) {
  EXPECT_EQ(quote_argument(L"app.exe"), L"app.exe");
  EXPECT_EQ(quote_argument(L"C:\\dir\\file"), L"C:\\dir\\file");  // backslashes are literal
}

TEST(QuoteArgument, QuotesEmptyAndSpacedArguments) {
  EXPECT_EQ(quote_argument(L""), L"\"\"");
  EXPECT_EQ(quote_argument(L"two words"), L"\"two words\"");
}

TEST(QuoteArgument, EscapesQuotesAndTheBackslashesBeforeThem) {
  EXPECT_EQ(quote_argument(L"say \"hi\""), L"\"say \\\"hi\\\"\"");
  EXPECT_EQ(quote_argument(L"a\\\"b"), L"\"a\\\\\\\"b\"");        // a\"b -> "a\\\"b"
  EXPECT_EQ(quote_argument(L"C:\\my dir\\"), L"\"C:\\my dir\\\\\"");  // trailing \ doubled before the closing quote
}

}  // namespace
}  // namespace jitcache::windows
