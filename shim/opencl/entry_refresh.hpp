// recapture (docs/settings.md, "recapture"): an entry stored before the app used its program
// lacks the code some drivers generate only at the first enqueue (PoCL 3.1: the work-group
// function specialised for each local size). Reading the binary of the program a hit was loaded
// into does not help: PoCL hands back the very bytes it was created from. So a hit on such an
// entry is rebuilt once, like a miss, and its binary read when the app is done with the program
// (parked, binary_capture.hpp); the entry stored then is marked "captured_after_use" and served
// from then on. Its trace reads a miss with reason "refresh: ...".
//
// Never refreshed: entries already captured after use, pack hits (packs are read-only and asked
// before the store: make the pack again from a refreshed store), memory hits (this process has the
// program already), multi-device builds (never parked), compiled objects (no code generated from
// them), and anything in a read-only store.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

// Whether the hit `lookup` of a build for `devices` is to be rebuilt once (see above), or the miss
// `lookup` built like a refresh (take_refresh_again, shim/opencl/binary_capture.hpp).
bool needs_refresh(const Engine& engine, const std::vector<cl_device_id>& devices, const Lookup& lookup);

// Turns the hit into a miss whose real build is then parked (BuiltProgram::refresh); returns the
// hit's binary (BuiltProgram::earlier_binary); none for a miss.
std::shared_ptr<const std::string> demote_for_refresh(Lookup& lookup);

}  // namespace jitcache::opencl
