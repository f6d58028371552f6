// The Level Zero side of a replay (capture/replay.hpp): loads libze_loader, lists the devices of
// every driver with the identity the key sees, and recreates a recorded module through the
// adapter's own zeModuleCreate hook (SPIR-V, build flags, specialization constants).
#pragma once

#include <memory>

#include "capture/replay.hpp"

namespace jitcache::level_zero {

std::unique_ptr<ReplayAdapter> replay_adapter();

}  // namespace jitcache::level_zero
