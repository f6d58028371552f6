// When a missed build's binary is read back and stored. By default right after the build. With
// capture = release (docs/settings.md, "capture") a single-device build nobody waits for is "parked":
// the shim keeps a reference to the program and reads its binary when the app is done with it
// (its last release, a rebuild, another build of the same key, or exit). Drivers that generate
// code lazily at first enqueue (PoCL's work-group functions) then hand out a binary that holds it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/engine.hpp"
#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

// A successful real build whose binaries are still to be stored: one lookup per device.
struct BuiltProgram {
  Engine* engine = nullptr;
  cl_program program = nullptr;
  std::vector<cl_device_id> devices;
  std::vector<Lookup> lookups;
  std::uint64_t build_us = 0;
  bool uses_memory_tier = false;  // single-device builds also keep the bytes in the memory tier
  // recapture (entry_refresh.hpp): a hit rebuilt to store the code the driver generates while the
  // app runs: parked whatever `capture` says (never a helper's), counted `entries_refreshed`.
  bool refresh = false;
};

// Stores now, or parks the program as the setting says.
void capture_now_or_later(BuiltProgram built);

bool is_parked(cl_program program);
// Stores `program` now if it is parked (it is about to be rebuilt, or the app let go of it) and
// drops the parked reference.
void capture_parked_program(cl_program program);
// Stores every parked program built for `key`; true when there was one (look the key up again).
bool capture_parked_key(const Digest128& key);
// Whether a program built for `key` is parked in this process.
bool is_key_parked(const Digest128& key);

}  // namespace jitcache::opencl
