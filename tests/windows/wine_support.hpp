// Running Windows programs under Wine for the tests in this folder. Every call is bounded by
// timeout(1) and runs with WINEDEBUG=-all: an unimplemented Windows call would otherwise open
// winedbg and wait forever. The prefix lives in the build dir (WINE_PREFIX), so only the first
// run of a fresh build pays for wineboot.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace jitcache::testing {

// Runs `wine64 argv...` with `env` added to the Wine settings. JITCACHE_* and LD_PRELOAD of the
// test's own environment are removed: what the Windows side sees is what the test passes.
RunResult wine(std::vector<std::string> argv, const std::map<std::string, std::string>& env = {});

// The example app's command line: exe --kernels <examples/opencl/kernels>.
std::vector<std::string> example(const char* exe);

}  // namespace jitcache::testing
