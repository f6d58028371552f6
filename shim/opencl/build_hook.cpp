// clBuildProgram through the cache: key per device, serve a shadow program built from cached
// binaries on a full hit, otherwise build for real and store what the driver produced.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/clock.hpp"
#include "core/engine.hpp"
#include "core/log.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_registry.hpp"
#include "shim/opencl/target_identity.hpp"

namespace jitcache::opencl {
namespace {

template <typename T>
std::vector<T> program_array(cl_program program, cl_program_info param) {
  size_t size = 0;
  if (next().clGetProgramInfo(program, param, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::vector<T> values(size / sizeof(T));
  if (next().clGetProgramInfo(program, param, size, values.data(), nullptr) != CL_SUCCESS) return {};
  return values;
}

std::string program_string(cl_program program, cl_program_info param) {
  std::vector<char> text = program_array<char>(program, param);
  return std::string(text.data(), text.empty() ? 0 : std::char_traits<char>::length(text.data()));
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string log(size, '\0');
  if (next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) {
    return {};
  }
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

std::vector<std::string> split_kernel_names(const std::string& names) {
  std::vector<std::string> result;
  size_t start = 0;
  while (start <= names.size() && !names.empty()) {
    size_t end = names.find(';', start);
    if (end == std::string::npos) end = names.size();
    if (end > start) result.push_back(names.substr(start, end - start));
    start = end + 1;
  }
  return result;
}

// The binaries the driver holds for `program`, one per device of `devices` (empty if none).
std::vector<std::string> read_binaries(cl_program program, const std::vector<cl_device_id>& devices) {
  std::vector<cl_device_id> program_devices = program_array<cl_device_id>(program, CL_PROGRAM_DEVICES);
  std::vector<size_t> sizes = program_array<size_t>(program, CL_PROGRAM_BINARY_SIZES);
  std::vector<std::string> binaries(devices.size());
  if (sizes.size() != program_devices.size()) return binaries;
  std::vector<std::string> buffers(sizes.size());
  std::vector<unsigned char*> pointers(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    buffers[i].resize(sizes[i]);
    pointers[i] = reinterpret_cast<unsigned char*>(buffers[i].data());
  }
  if (next().clGetProgramInfo(program, CL_PROGRAM_BINARIES, pointers.size() * sizeof(unsigned char*),
                              pointers.data(), nullptr) != CL_SUCCESS) {
    return binaries;
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    for (size_t i = 0; i < program_devices.size(); ++i) {
      if (program_devices[i] == devices[d]) binaries[d] = std::move(buffers[i]);
    }
  }
  return binaries;
}

// One clBuildProgram call's cache work, shared with the notify trampoline of async builds.
struct PendingBuild {
  Engine* engine = nullptr;
  cl_program program = nullptr;
  std::vector<cl_device_id> devices;
  std::vector<Lookup> lookups;
  Stopwatch watch;
  BuildNotify app_notify = nullptr;
  void* app_user_data = nullptr;
  std::atomic<bool> completed{false};
};

bool build_succeeded(cl_program program, const std::vector<cl_device_id>& devices) {
  for (cl_device_id device : devices) {
    cl_build_status status = CL_BUILD_NONE;
    next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr);
    if (status != CL_BUILD_SUCCESS) return false;
  }
  return true;
}

// After the real build: store each device's binary, or record the failure.
void finish_real_build(PendingBuild& pending, bool succeeded) {
  std::uint64_t build_us = pending.watch.elapsed_us();
  if (!succeeded) {
    for (Lookup& lookup : pending.lookups) pending.engine->failed(lookup, "the driver's build failed");
    return;
  }
  std::vector<std::string> binaries = read_binaries(pending.program, pending.devices);
  std::vector<std::string> kernel_names = split_kernel_names(program_string(pending.program, CL_PROGRAM_KERNEL_NAMES));
  for (size_t d = 0; d < pending.lookups.size(); ++d) {
    Lookup& lookup = pending.lookups[d];
    if (binaries[d].empty()) {
      pending.engine->uncacheable(*lookup.program, lookup.device, "driver returned no binary");
      continue;
    }
    pending.engine->built(lookup, {std::move(binaries[d]), kernel_names, build_log(pending.program, pending.devices[d]),
                                   build_us});
  }
}

void CL_CALLBACK on_real_build_done(cl_program program, void* user_data) {
  auto* pending = static_cast<PendingBuild*>(user_data);
  try {
    finish_real_build(*pending, build_succeeded(program, pending->devices));
  } catch (...) {
  }
  pending->completed = true;
  BuildNotify notify = pending->app_notify;
  void* app_data = pending->app_user_data;
  delete pending;
  notify(program, app_data);
}

cl_int build_for_real(std::unique_ptr<PendingBuild> pending, const char* options) {
  // The program is built for real now, so no shadow serves it any more.
  if (cl_program old = registry().replace_shadow(pending->program, nullptr)) next().clReleaseProgram(old);
  cl_uint count = static_cast<cl_uint>(pending->devices.size());
  pending->watch = Stopwatch();
  if (!pending->app_notify) {
    cl_int status = next().clBuildProgram(pending->program, count, pending->devices.data(), options, nullptr, nullptr);
    finish_real_build(*pending, status == CL_SUCCESS);
    return status;
  }
  PendingBuild* raw = pending.release();  // owned by the trampoline from here on
  cl_int status = next().clBuildProgram(raw->program, count, raw->devices.data(), options, on_real_build_done, raw);
  // A build refused up front may never call back; leaking the small record is the safe choice.
  return status;
}

// Loads every device's cached binary into a shadow program. False: the driver refused them.
bool serve_from_cache(PendingBuild& pending, cl_context context, const char* options) {
  Stopwatch watch;
  std::vector<size_t> lengths;
  std::vector<const unsigned char*> binaries;
  for (const Lookup& lookup : pending.lookups) {
    lengths.push_back(lookup.binary.size());
    binaries.push_back(reinterpret_cast<const unsigned char*>(lookup.binary.data()));
  }
  cl_uint count = static_cast<cl_uint>(pending.devices.size());
  std::vector<cl_int> binary_status(count, CL_SUCCESS);
  cl_int status = CL_SUCCESS;
  cl_program shadow = next().clCreateProgramWithBinary(context, count, pending.devices.data(), lengths.data(),
                                                       binaries.data(), binary_status.data(), &status);
  std::string refusal;
  if (!shadow || status != CL_SUCCESS) {
    refusal = "clCreateProgramWithBinary returned " + std::to_string(status);
  } else if ((status = next().clBuildProgram(shadow, count, pending.devices.data(), options, nullptr, nullptr)) !=
             CL_SUCCESS) {
    refusal = "clBuildProgram of the binary returned " + std::to_string(status);
  }
  if (!refusal.empty()) {
    if (shadow) next().clReleaseProgram(shadow);
    for (Lookup& lookup : pending.lookups) pending.engine->rejected(lookup, refusal);
    return false;
  }
  if (cl_program old = registry().replace_shadow(pending.program, shadow)) next().clReleaseProgram(old);
  std::uint64_t load_us = watch.elapsed_us();
  for (Lookup& lookup : pending.lookups) pending.engine->loaded(lookup, load_us);
  return true;
}

// The devices a build is for. Empty when the list names a device the program is not for, or one
// twice: that is the driver's to judge, and such a list must never be queried, keyed or used to
// load (and then drop as "rejected") a good entry.
std::vector<cl_device_id> devices_to_build(cl_program program, cl_uint num_devices, const cl_device_id* device_list) {
  std::vector<cl_device_id> program_devices = program_array<cl_device_id>(program, CL_PROGRAM_DEVICES);
  if (!num_devices || !device_list) return program_devices;
  std::vector<cl_device_id> requested(device_list, device_list + num_devices);
  for (auto it = requested.begin(); it != requested.end(); ++it) {
    if (std::find(program_devices.begin(), program_devices.end(), *it) == program_devices.end()) return {};
    if (std::find(requested.begin(), it, *it) != it) return {};
  }
  return requested;
}

ProgramInputs inputs_of(const TrackedProgram& tracked, const char* options) {
  ProgramInputs inputs;
  inputs.api = Api::opencl;
  inputs.kind = tracked.kind;
  inputs.input = tracked.input;
  inputs.options = options ? options : "";
  for (const auto& [id, value] : tracked.spec_constants) inputs.spec_constants.push_back({id, value});
  return inputs;
}

std::filesystem::path working_directory() {
  std::error_code ec;
  return std::filesystem::current_path(ec);
}

cl_int cached_build(cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                    BuildNotify pfn_notify, void* user_data) {
  Engine* engine = Engine::instance();
  std::optional<TrackedProgram> tracked = registry().find(program);
  // Driver-side argument errors and kernels attached to the program are the driver's to report.
  bool well_formed = (num_devices == 0) == (device_list == nullptr) && (pfn_notify || !user_data);
  // While a shadow serves the program the driver never built it and cannot see the kernels made
  // from the shadow: answer what it answers for a program with kernels attached.
  if (tracked && well_formed && registry().has_shadow_kernels(program)) return CL_INVALID_OPERATION;
  bool keyable = engine && tracked && well_formed && !registry().has_kernels(program);
  if (!keyable) return next().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);

  auto pending = std::make_unique<PendingBuild>();
  pending->engine = engine;
  pending->program = program;
  pending->devices = devices_to_build(program, num_devices, device_list);
  if (pending->devices.empty()) {
    if (cl_program old = registry().replace_shadow(program, nullptr)) next().clReleaseProgram(old);
    return next().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);
  }
  pending->app_notify = pfn_notify;
  pending->app_user_data = user_data;

  PreparedProgram prepared = engine->prepare(inputs_of(*tracked, options), working_directory());
  if (!prepared.uncacheable.empty()) {
    engine->uncacheable(*prepared.inputs, "", prepared.uncacheable);
    if (cl_program old = registry().replace_shadow(program, nullptr)) next().clReleaseProgram(old);
    return next().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);
  }

  bool all_hit = true;
  for (cl_device_id device : pending->devices) {
    const OpenClTarget& target = target_of(device);
    pending->lookups.push_back(engine->lookup(prepared, target.identity, target.name));
    all_hit = all_hit && pending->lookups.back().hit();
  }
  if (all_hit && serve_from_cache(*pending, tracked->context, options)) {
    if (pfn_notify) pfn_notify(program, user_data);  // the program is usable now
    return CL_SUCCESS;
  }
  for (Lookup& lookup : pending->lookups) {
    if (lookup.hit()) {  // another device missed: this device's entry is rebuilt and replaced
      lookup.verdict = Verdict::miss;
      lookup.reason = "another device of the same build missed";
      lookup.binary.clear();
    }
  }
  return build_for_real(std::move(pending), options);
}

}  // namespace

cl_int build_program(cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                     BuildNotify pfn_notify, void* user_data) {
  try {
    return cached_build(program, num_devices, device_list, options, pfn_notify, user_data);
  } catch (const std::exception& e) {
    log_warning(std::string("build left uncached: ") + e.what());
    return next().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);
  }
}

}  // namespace jitcache::opencl
