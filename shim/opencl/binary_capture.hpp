// When a missed build's binary is read back and stored. By default right after the build. With
// capture = release (docs/settings.md, "capture") a single-device build nobody waits for is "parked":
// the shim keeps a reference to the program and reads its binary when the app is done with it
// (its last release, a rebuild, another build of the same key, or exit). Drivers that generate
// code lazily at first enqueue (PoCL's work-group functions) then hand out a binary that holds it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
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
  // A refresh's replaced entry (same key, a valid binary of the same inputs). While the program is
  // parked, the app's CL_PROGRAM_BINARY_SIZES / BINARIES are answered from it: asking the driver
  // would make PoCL pack the binary then, before the kernels ran, and return those bytes ever after
  // (hashcat and CLBlast read it right after the build), so the refreshed entry would lack the code.
  std::shared_ptr<const std::string> earlier_binary;
};

// After the real build: hands what the driver said to the engine (Engine::finish), then stores
// the binaries now, parks the program, or does nothing (failed, or a capture helper stores it).
void finish_build(BuiltProgram built, bool succeeded, const std::string& failure);

bool is_parked(cl_program program);
// Stores `program` now if it is parked (it is about to be rebuilt, or the app let go of it) and
// drops the parked reference.
void capture_parked_program(cl_program program);
// The app let go of `program` (no reference, no kernel): a parked one is stored now if the driver
// is done with it too, else once it is (capture_released_parked). The count read here decides when
// the binary is read, never what is kept: PoCL still runs the commands the app queued with its
// kernels, and reading the binary generates code beside them (an assertion in PoCL's kernel cache,
// `pocl_release_dlhandle_cache`, seen when pyopencl released programs before its queue ran).
void capture_parked_after_release(cl_program program);
// Stores the programs capture_parked_after_release left for later whose commands have run; cheap
// when there are none. Called from the app's next release and build calls, and at exit all go.
void capture_released_parked();
// Stores every parked program built for `key`; true when there was one (look the key up again).
// Not a program whose binary queries are answered from its earlier entry: that one is stored only
// when the app is done with it or rebuilds it (its answers must not change while the app holds it).
bool capture_parked_key(const Digest128& key);
// Whether a program built for `key` is parked in this process.
bool is_key_parked(const Digest128& key);

// A refreshed program was stored without growing: its binary holds nothing the earlier entry lacked
// (the app let go of it before running its kernels, as pyopencl does with a program it builds only
// to ask about its kernels before building the same source again). The next build of `key` in this
// process is refreshed again, once, even though the entry is marked now: true (once) for such a key.
bool take_refresh_again(const Digest128& key);

// Whether `program` is parked, built for `key` on exactly `devices`: building it again with the same
// inputs would give the same program (the app builds one program object twice, as pyopencl does).
bool is_parked_as(cl_program program, const std::vector<cl_device_id>& devices, const Digest128& key);

// The app's CL_PROGRAM_BINARY_SIZES / CL_PROGRAM_BINARIES of a parked program with an earlier
// binary (see BuiltProgram::earlier_binary), answered from it: true with `status` set. False (ask
// the driver): any other query or program, or a program for more devices than the one it was built for.
bool answer_parked_binary_query(cl_program program, cl_program_info param, size_t param_value_size, void* param_value,
                                size_t* param_value_size_ret, cl_int& status);

}  // namespace jitcache::opencl
