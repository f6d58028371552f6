// The compile log tests read to count real compiles: "compile <build digest>\n" per SPIR-V build.
#pragma once

#include <string_view>

namespace jitcache::test_ze {

// Appends one line to JITCACHE_TEST_ZE_COMPILE_LOG, if set. The file is opened O_APPEND and the
// line goes out in a single write(), so concurrent processes never lose or interleave lines.
// Returns false when the log is set but could not be written.
bool record_compile(std::string_view build_digest_hex);

}  // namespace jitcache::test_ze
