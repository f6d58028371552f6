// Rebuilds a recorded program (hashing/recorded_inputs.hpp) in this process through an API
// adapter's own create and build hooks, so that the key, the lookup, the build lock, the remote
// lease and the store are the shim's, exactly as in the app that recorded it. Used by `jitcache
// warm` (after a driver upgrade, on an empty machine) and by the capture helper (capture =
// helper), both in a process of their own (tools/).
//
// This is the engine part, the same for every API: pick the device the recorded key names, check
// the key derived here against the recorded one (or the app's), skip what is stored, build, check
// that the entry landed. An adapter (shim/opencl/replay.hpp, shim/level_zero/replay.hpp) only
// loads its loader, lists the devices and runs its API's create + build through its hooks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/replay_mark.hpp"
#include "hashing/recorded_inputs.hpp"

namespace jitcache {

struct ReplayRequest {
  RecordedInputs inputs;
  std::string device_digest;          // the recorded key's "device" component digest: which device
  nlohmann::json recorded_components;  // the recorded key's components ({name: {digest}}): what must not differ
  // The capture helper: the app's key. Nothing is built unless the key derived here is this one.
  std::optional<Digest128> expected_key;
  // The capture helper's worker: the helper holds the expected key's build lock for it (false:
  // the build takes the lock itself).
  bool lock_held_by_parent = false;
  // Who replays (`jitcache warm`, or a capture helper and for which app): replay() marks the
  // process with it before anything is built, so that what it stores is loaded back first.
  ReplayMark mark;
};

struct ReplayResult {
  // no_device: this machine has no device (or no driver of the API) with the recorded identity;
  // on a server shared by several kinds of machines that is expected, not a failure.
  enum class Outcome { built, already_warm, no_device, failed };
  Outcome outcome = Outcome::failed;
  std::string reason;  // why it failed (or no device matched)
  std::string key;     // the key derived here (hex), when a device matched
  std::string device;  // its name
};
const char* to_string(ReplayResult::Outcome outcome);

// One device as the adapter sees it; `handle` is the adapter's own (a cl_device_id, a ze device).
struct ReplayDevice {
  std::string name;
  TargetIdentity identity;
  void* handle = nullptr;
  void* owner = nullptr;  // what the adapter needs besides (a Level Zero driver)
  std::string unusable;   // the device could not be described: never chosen
};

class ReplayAdapter {
 public:
  virtual ~ReplayAdapter() = default;
  // Loads the API's loader: "" or why it cannot be.
  virtual std::string open() = 0;
  // Every device the loader offers (`why` says why there is none).
  virtual std::vector<ReplayDevice> devices(std::string* why) = 0;
  // Creates the recorded program on `device` and builds it through the adapter's hooks (the
  // engine stores it in the background): "" or why the driver refused. `request` as given.
  virtual std::string build(const ReplayDevice& device, const ReplayRequest& request) = 0;
  // Gets the driver ready to build on `device` (with `load_compiler`, its compiler loaded too),
  // bypassing the cache.
  virtual void warm_up(const ReplayDevice& /*device*/, bool /*load_compiler*/) {}
};

// Makes this process's keyed environment the recorded one (keyed variables the record does not
// hold are unset) and enters the recorded working directory: the include scan and the key then see
// what the app saw. Call before replay(). False and `why` set when the directory cannot be entered.
bool enter_recorded_context(const RecordedInputs& inputs, std::string* why);

// Marks this process as a replay (request.mark), finds the device whose identity the recorded key
// names and builds the recorded program there unless its key is already stored. A build that
// stored nothing says why (e.g. its binary did not load back). Never throws.
ReplayResult replay(const ReplayRequest& request, ReplayAdapter& adapter);

// A capture helper's worker before its first program: loads the driver and readies the device
// whose key component digest is `device_digest` (and with `load_compiler` its compiler), so that
// the programs that follow cost a build each, not a driver start. Nothing is looked up or stored.
// Never throws.
void warm_up(const std::string& device_digest, ReplayAdapter& adapter, bool load_compiler);

}  // namespace jitcache
