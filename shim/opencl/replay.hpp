// The OpenCL side of a replay (capture/replay.hpp): loads libOpenCL, lists its devices with the
// identity the key sees, and recreates a recorded program through the adapter's own hooks
// (create_program_with_source/il, spec constants, build_program).
#pragma once

#include <memory>

#include "capture/replay.hpp"

namespace jitcache::opencl {

std::unique_ptr<ReplayAdapter> replay_adapter();

}  // namespace jitcache::opencl
