// Rebuilds a recorded program (hashing/recorded_inputs.hpp) in this process through the OpenCL
// adapter's own hooks: the program is created and built with create_program_with_source/il and
// build_program, so the key, the lookup, the build lock, the remote lease and the store are the
// shim's, exactly as in the app that recorded it. Used by `jitcache warm` (after a driver upgrade)
// and by the capture helper (capture = helper), both in a process of their own (tools/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hashing/recorded_inputs.hpp"

namespace jitcache::opencl {

struct ReplayRequest {
  RecordedInputs inputs;
  std::string device_digest;          // the recorded key's "device" component digest: which device
  nlohmann::json recorded_components;  // the recorded sidecar's key components: what must not differ
  // The capture helper: the app's key. Nothing is built unless the key derived here is this one.
  std::optional<Digest128> expected_key;
  // The capture helper's child: the expected key's build lock, inherited (-1: none; then the
  // build takes the lock itself).
  std::intptr_t handed_lock = -1;
};

struct ReplayResult {
  enum class Outcome { built, already_warm, failed };
  Outcome outcome = Outcome::failed;
  std::string reason;  // why it failed
  std::string key;     // the key derived here (hex), when a device matched
  std::string device;  // its name
};
const char* to_string(ReplayResult::Outcome outcome);

// Makes this process's keyed environment the recorded one (keyed variables the record does not
// hold are unset) and enters the recorded working directory: the include scan and the key then see
// what the app saw. Call before replay(). False and `why` set when the directory cannot be entered.
bool enter_recorded_context(const RecordedInputs& inputs, std::string* why);

// Loads the OpenCL loader, finds the device whose identity the recorded key names, and builds the
// recorded program there unless its key is already stored. Never throws.
ReplayResult replay(const ReplayRequest& request);

}  // namespace jitcache::opencl
