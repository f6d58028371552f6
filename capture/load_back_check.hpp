// What the adapters' load-back checks share (shim/opencl/load_back.hpp,
// shim/level_zero/load_back.hpp): a replay (core/replay_mark.hpp) loads the binary it is about to
// store back first, and the loaded binary must name the build's kernels.
#pragma once

#include <string>
#include <vector>

namespace jitcache {

// "" when `loaded` names exactly `built`'s kernels, in that order; else the verdict with both lists.
std::string kernel_names_mismatch(const std::vector<std::string>& loaded, const std::vector<std::string>& built);

// Tests only, in a replay (JITCACHE_TEST_REPLAY_BREAKS_BINARY=1; read nowhere else): the bytes about
// to be loaded back and stored lose their first 16 bytes' meaning (the format's header), as a
// binary the driver cannot load would.
void break_binary_for_tests(std::string& binary);

}  // namespace jitcache
