#include "shim/opencl/replay.hpp"

#include <csignal>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

#include "core/engine.hpp"
#include "core/settings.hpp"
#include "hashing/environment.hpp"
#include "hashing/key.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_queries.hpp"
#include "shim/opencl/target_identity.hpp"
#include "store/disk_store.hpp"

extern char** environ;

namespace jitcache::opencl {
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

template <typename Function>
Function loader_function(const char* name) {
  return reinterpret_cast<Function>(find_real_function(name));
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

struct Device {
  cl_device_id id = nullptr;
  const OpenClTarget* target = nullptr;
};

std::optional<Device> matching_device(const std::string& device_digest, std::string* why) {
  auto get_platforms = loader_function<decltype(&clGetPlatformIDs)>("clGetPlatformIDs");
  auto get_devices = loader_function<decltype(&clGetDeviceIDs)>("clGetDeviceIDs");
  if (!get_platforms || !get_devices) return *why = "no OpenCL loader (libOpenCL.so.1) could be loaded", std::nullopt;
  cl_uint platform_count = 0;
  if (get_platforms(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0) {
    return *why = "no OpenCL platform", std::nullopt;
  }
  std::vector<cl_platform_id> platforms(platform_count);
  get_platforms(platform_count, platforms.data(), nullptr);
  std::string seen;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (get_devices(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> devices(count);
    get_devices(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr);
    for (cl_device_id device : devices) {
      const OpenClTarget& target = target_of(device, next());
      KeyRecord probe = derive_key(ProgramInputs{}, target.identity);
      if (component_digest(probe, "device") == device_digest) return Device{device, &target};
      seen += seen.empty() ? target.name : ", " + target.name;
    }
  }
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

cl_program create_program(cl_context context, const RecordedInputs& recorded, cl_int* status) {
  if (recorded.kind == ProgramKind::il) {
    return create_program_with_il(context, recorded.input.data(), recorded.input.size(), status);
  }
  const char* text = recorded.input.data();
  size_t length = recorded.input.size();
  return create_program_with_source(context, 1, &text, &length, status);
}

ReplayResult build_on(const Device& device, const ReplayRequest& request, Engine& engine) {
  ReplayResult result;
  result.device = device.target->name;
  PreparedProgram prepared = engine.prepare(program_inputs(request.inputs));
  if (!prepared.uncacheable.empty()) return result.reason = "uncacheable here: " + prepared.uncacheable, result;
  KeyRecord derived = derive_key(*prepared.inputs, device.target->identity);
  result.key = derived.key.hex();
  if (request.expected_key && derived.key != *request.expected_key) {
    std::string why = program_difference(derived, request);
    result.reason = "the key derived here is not the app's" + (why.empty() ? std::string() : ": " + why);
    return result;
  }
  if (std::string why = program_difference(derived, request); !why.empty()) return result.reason = why, result;
  if (stored(derived.key)) return result.outcome = ReplayResult::Outcome::already_warm, result;

  auto create_context = loader_function<decltype(&clCreateContext)>("clCreateContext");
  auto release_context = loader_function<decltype(&clReleaseContext)>("clReleaseContext");
  if (!create_context || !release_context) return result.reason = "the OpenCL loader lacks clCreateContext", result;
  cl_int status = CL_SUCCESS;
  cl_context context = create_context(nullptr, 1, &device.id, nullptr, nullptr, &status);
  if (!context || status != CL_SUCCESS) return result.reason = "clCreateContext returned " + std::to_string(status), result;
  cl_program program = create_program(context, request.inputs, &status);
  if (program && status == CL_SUCCESS) {
    for (const SpecConstant& constant : request.inputs.spec_constants) {
      if (status != CL_SUCCESS) break;
      status = set_program_specialization_constant(program, constant.id, constant.value.size(), constant.value.data());
    }
    if (status == CL_SUCCESS) {
      status = build_program(program, 1, &device.id, request.inputs.options.c_str(), nullptr, nullptr);
      // Tests only: the helper dies between the driver's build and the store.
      if (const char* dies = std::getenv("JITCACHE_TEST_HELPER_DIES"); request.expected_key && dies &&
                                                                         std::string_view(dies) == "after_build") {
        ::raise(SIGKILL);
      }
      if (status != CL_SUCCESS) {
        std::string log = build_log(program, device.id);
        result.reason = "the driver's build failed (" + std::to_string(status) + ")" +
                        (log.empty() ? "" : ": " + log.substr(0, 400));
      }
    } else {
      result.reason = "clSetProgramSpecializationConstant returned " + std::to_string(status);
    }
  } else {
    result.reason = "creating the program returned " + std::to_string(status);
  }
  if (program) release_program(program);
  release_context(context);
  engine.flush();  // the background store, before looking for the entry
  if (!result.reason.empty()) return result;
  if (!stored(derived.key)) {
    result.reason = "built, but no entry was stored (uncacheable here, or the store refused it: see the log)";
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

ReplayResult replay(const ReplayRequest& request) {
  try {
    if (request.inputs.api != Api::opencl) return failure("only OpenCL programs can be replayed so far");
    // RTLD_GLOBAL: the adapter finds the loader's functions as it finds them behind an app.
    if (!::dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL) && !::dlopen("libOpenCL.so", RTLD_NOW | RTLD_GLOBAL)) {
      return failure("no OpenCL loader (libOpenCL.so.1) could be loaded");
    }
    Engine* engine = Engine::instance();
    if (!engine) return failure("the cache is disabled or unusable here");
    std::string why;
    if (request.handed_lock >= 0 && request.expected_key &&
        !engine->adopt_build_lock(*request.expected_key, request.handed_lock, &why)) {
      return failure(why);
    }
    std::optional<Device> device = matching_device(request.device_digest, &why);
    if (!device) return failure(why);
    return build_on(*device, request, *engine);
  } catch (const std::exception& e) {
    return failure(std::string("replay failed: ") + e.what());
  }
}

}  // namespace jitcache::opencl
