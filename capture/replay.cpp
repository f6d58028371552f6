#include "capture/replay.hpp"

#include <cstdlib>
#include <memory>
#include <optional>

#include <unistd.h>

#include "core/cpu_account.hpp"
#include "core/engine.hpp"
#include "core/settings.hpp"
#include "hashing/environment.hpp"
#include "hashing/key.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {
namespace {

// Key components that must be the recorded ones: everything but the compiler (which `jitcache
// warm` exists to change) and the device (chosen to match).
constexpr const char* kProgramComponents[] = {"schema", "api", "kind", "input", "options",
                                              "headers", "spec_constants", "environment"};

ReplayResult failure(std::string reason) {
  ReplayResult result;
  result.reason = std::move(reason);
  return result;
}

ReplayResult not_here(std::string reason) {
  ReplayResult result = failure(std::move(reason));
  result.outcome = ReplayResult::Outcome::no_device;
  return result;
}

std::string component_digest(const KeyRecord& record, const std::string& name) {
  for (const KeyComponent& component : record.components) {
    if (component.name == name) return component.digest.hex();
  }
  return {};
}

std::string recorded_digest(const nlohmann::json& components, const char* name) {
  if (!components.is_object()) return {};
  auto it = components.find(name);
  if (it == components.end() || !it->is_object()) return {};
  auto digest = it->find("digest");
  return digest != it->end() && digest->is_string() ? digest->get<std::string>() : std::string();
}

// Why the key derived here is not the recorded program's: the components that differ, with the
// headers named (the usual cause: a header edited since the app built the program).
std::string program_difference(const KeyRecord& derived, const ReplayRequest& request) {
  if (request.recorded_components.is_null()) return {};  // the capture helper: its key is compared whole
  std::string differs;
  for (const char* name : kProgramComponents) {
    if (component_digest(derived, name) == recorded_digest(request.recorded_components, name)) continue;
    differs += differs.empty() ? name : std::string(", ") + name;
  }
  if (differs.empty()) return {};
  std::string why = "the inputs here differ from the recorded ones in: " + differs;
  for (const RecordedHeader& header : request.inputs.headers) {
    if (!header.found) continue;
    std::string reason;
    ProgramInputs probe;  // the recorded contents' digest against the file there now
    probe.headers.push_back({header.name, header.path, true, xxh3_128(header.contents)});
    if (!record_inputs(probe, "", &reason)) why += "; " + reason + " since it was recorded";
  }
  return why;
}

std::optional<ReplayDevice> matching_device(ReplayAdapter& adapter, const std::string& device_digest, std::string* why) {
  std::string none;
  std::vector<ReplayDevice> devices = adapter.devices(&none);
  std::string seen;
  for (ReplayDevice& device : devices) {
    if (!device.unusable.empty()) continue;
    KeyRecord probe = derive_key(ProgramInputs{}, device.identity);
    if (component_digest(probe, "device") == device_digest) return std::move(device);
    seen += seen.empty() ? device.name : ", " + device.name;
  }
  if (devices.empty() && !none.empty()) return *why = none, std::nullopt;
  *why = "no device here has the recorded identity (devices here: " + (seen.empty() ? "none" : seen) + ")";
  return std::nullopt;
}

ProgramInputs program_inputs(const RecordedInputs& recorded) {
  ProgramInputs inputs;
  inputs.api = recorded.api;
  inputs.kind = recorded.kind;
  inputs.input = recorded.input;
  inputs.options = recorded.options;
  inputs.spec_constants = recorded.spec_constants;
  return inputs;
}

bool stored(const Digest128& key) {
  Settings settings = load_settings();
  StoreLimits limits;
  limits.read_only = true;  // looking must not touch the entry's LRU clock
  std::unique_ptr<DiskStore> store = DiskStore::open(settings.dir, limits, nullptr);
  return store && store->load(key).status == LoadStatus::hit;
}

ReplayResult build_on(const ReplayDevice& device, const ReplayRequest& request, ReplayAdapter& adapter, Engine& engine) {
  ReplayResult result;
  result.device = device.name;
  PreparedProgram prepared = engine.prepare(program_inputs(request.inputs));
  if (!prepared.uncacheable.empty()) return result.reason = "uncacheable here: " + prepared.uncacheable, result;
  KeyRecord derived = derive_key(*prepared.inputs, device.identity);
  result.key = derived.key.hex();
  if (request.expected_key && derived.key != *request.expected_key) {
    std::string why = program_difference(derived, request);
    result.reason = "the key derived here is not the app's" + (why.empty() ? std::string() : ": " + why);
    return result;
  }
  if (std::string why = program_difference(derived, request); !why.empty()) return result.reason = why, result;
  if (stored(derived.key)) return result.outcome = ReplayResult::Outcome::already_warm, result;
  result.reason = adapter.build(device, request);
  // The store runs in the engine's background thread; this one waits for it (with the trace).
  cpu_account::switch_to("store");
  engine.flush();  // the background store, before looking for the entry
  if (!result.reason.empty()) return result;
  if (!stored(derived.key)) {
    result.reason = engine.why_not_stored(derived.key);
    if (result.reason.empty()) {
      result.reason = "built, but no entry was stored (uncacheable here, or the store refused it: see the log)";
    }
    return result;
  }
  result.outcome = ReplayResult::Outcome::built;
  return result;
}

}  // namespace

const char* to_string(ReplayResult::Outcome outcome) {
  switch (outcome) {
    case ReplayResult::Outcome::built: return "built";
    case ReplayResult::Outcome::already_warm: return "already_warm";
    case ReplayResult::Outcome::no_device: return "no_device";
    case ReplayResult::Outcome::failed: return "failed";
  }
  return "?";
}

bool enter_recorded_context(const RecordedInputs& inputs, std::string* why) {
  const Settings settings = load_settings();
  const std::vector<std::string> patterns = keyed_patterns(parse_env_patterns(settings.env_patterns));
  for (const auto& [name, value] : matching_environment(patterns)) ::unsetenv(name.c_str());
  // Only keyed variables: a record is data, never a way to set LD_PRELOAD or JITCACHE_* here.
  auto keyed = [&](const std::string& name) {
    if (name.empty() || name.find('=') != std::string::npos || name.rfind("JITCACHE_", 0) == 0) return false;
    for (const std::string& pattern : patterns) {
      if (!pattern.empty() && pattern.back() == '*' ? name.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0
                                                    : name == pattern) {
        return true;
      }
    }
    return false;
  };
  for (const auto& [name, value] : inputs.environment) {
    if (keyed(name)) ::setenv(name.c_str(), value.c_str(), 1);
  }
  if (!inputs.working_dir.empty() && ::chdir(inputs.working_dir.c_str()) != 0) {
    *why = "cannot enter the recorded working directory " + inputs.working_dir;
    return false;
  }
  return true;
}

ReplayResult replay(const ReplayRequest& request, ReplayAdapter& adapter) {
  mark_replay(request.mark);  // before the engine sees any build
  try {
    std::optional<cpu_account::Step> loading(std::in_place, "driver_load");  // the loader, its drivers, the devices
    if (std::string why = adapter.open(); !why.empty()) return not_here(why);
    Engine* engine = Engine::instance();
    if (!engine) return failure("the cache is disabled or unusable here");
    std::string why;
    if (request.lock_held_by_parent && request.expected_key) engine->build_lock_held_for(*request.expected_key);
    std::optional<ReplayDevice> device = matching_device(adapter, request.device_digest, &why);
    if (!device) return not_here(why);
    loading.reset();
    return build_on(*device, request, adapter, *engine);
  } catch (const std::exception& e) {
    return failure(std::string("replay failed: ") + e.what());
  }
}

void warm_up(const std::string& device_digest, ReplayAdapter& adapter, bool load_compiler) {
  try {
    cpu_account::Step loading("driver_load");
    if (!adapter.open().empty()) return;
    std::string why;
    if (std::optional<ReplayDevice> device = matching_device(adapter, device_digest, &why)) {
      adapter.warm_up(*device, load_compiler);
    }
  } catch (...) {
    // Only a head start: the first program pays for the driver's start instead.
  }
}

}  // namespace jitcache
