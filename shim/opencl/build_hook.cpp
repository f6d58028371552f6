// clBuildProgram through the cache: key per device, serve a shadow program built from cached
// binaries on a full hit, otherwise build for real and store what the driver produced. Single-device
// builds also keep their shadow in the engine's memory tier (per context), so that the same build
// again in that context, or by threads that waited for this one, reuses it.
#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "core/cpu_account.hpp"
#include "core/engine.hpp"
#include "core/log.hpp"
#include "shim/opencl/app_holds.hpp"
#include "shim/opencl/binary_capture.hpp"
#include "shim/opencl/deferred_compile.hpp"
#include "shim/opencl/driver_quirks.hpp"
#include "shim/opencl/entry_refresh.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_queries.hpp"
#include "shim/opencl/program_registry.hpp"
#include "shim/opencl/recorded_queries.hpp"
#include "shim/opencl/target_identity.hpp"

namespace jitcache::opencl {
namespace {

// One clBuildProgram call's cache work, shared with the notify trampoline of async builds.
struct PendingBuild {
  Engine* engine = nullptr;
  cl_program program = nullptr;
  cl_context context = nullptr;
  std::string options;
  std::vector<cl_device_id> devices;
  std::vector<Lookup> lookups;
  Stopwatch watch;
  BuildNotify app_notify = nullptr;
  void* app_user_data = nullptr;
  std::atomic<bool> completed{false};
  bool refresh = false;  // a hit rebuilt to capture lazily generated code (entry_refresh.hpp)
  std::shared_ptr<const std::string> earlier_binary;  // the refreshed entry's (BuiltProgram)
  AnswersByDevice answers;  // on a hit: what the real build answered, per device
};

bool uses_memory_tier(const PendingBuild& pending) { return pending.devices.size() == 1; }

// A memory-tier value owning one reference to `shadow`, released when the tier drops it.
MemoryValue memory_value(cl_program shadow, std::uint64_t bytes, std::uint64_t compile_us) {
  MemoryValue value;
  value.object = std::shared_ptr<void>(shadow, [](void* program) { next().clReleaseProgram(static_cast<cl_program>(program)); });
  value.bytes = bytes;
  value.compile_us = compile_us;
  return value;
}

// A program built from `binaries` (one per device of `pending`), or nullptr with `refusal` set.
cl_program build_from_binaries(const PendingBuild& pending, const std::vector<const std::string*>& binaries,
                               std::string* refusal) {
  cl_uint count = static_cast<cl_uint>(pending.devices.size());
  cl_int status = CL_SUCCESS;
  cl_program shadow = create_program_from_cache(pending.context, pending.devices, binaries, &status);
  if (!shadow || status != CL_SUCCESS) {
    *refusal = "clCreateProgramWithBinary returned " + std::to_string(status);
  } else if ((status = next().clBuildProgram(shadow, count, pending.devices.data(), pending.options.c_str(), nullptr,
                                             nullptr)) != CL_SUCCESS) {
    *refusal = "clBuildProgram of the binary returned " + std::to_string(status);
  } else {
    return shadow;
  }
  if (shadow) next().clReleaseProgram(shadow);
  return nullptr;
}

// After the real build: store each device's binary (now or later), or record the failure. Later
// builds of the key in this context find the bytes in the memory tier and load them once into a
// shadow then: loading them here would cost every miss a second load, which on drivers whose
// binary is an IR (NVIDIA's PTX) is most of a compile.
void finish_real_build(PendingBuild& pending, bool succeeded,
                       const std::string& failure = "the driver's build failed") {
  std::uint64_t build_us = pending.watch.elapsed_us();
  finish_build({pending.engine, pending.program, pending.devices, std::move(pending.lookups), build_us,
                uses_memory_tier(pending), pending.refresh, std::move(pending.earlier_binary)},
               succeeded, failure);
}

// The async build's record is shared by the driver's callback and the caller; whichever finishes
// it first (`completed`) ends the lookups, which releases their build locks.
void CL_CALLBACK on_real_build_done(cl_program program, void* user_data) {
  auto* holder = static_cast<std::shared_ptr<PendingBuild>*>(user_data);
  std::shared_ptr<PendingBuild> pending = std::move(*holder);
  delete holder;
  if (!pending->completed.exchange(true)) {
    try {
      finish_real_build(*pending, build_succeeded(program, pending->devices));
    } catch (...) {
    }
  }
  pending->app_notify(program, pending->app_user_data);
}

cl_int build_for_real(std::unique_ptr<PendingBuild> pending, const char* options) {
  // The program is built for real now, so no shadow serves it any more.
  if (cl_program old = registry().replace_shadow(pending->program, nullptr)) next().clReleaseProgram(old);
  cl_uint count = static_cast<cl_uint>(pending->devices.size());
  pending->watch = Stopwatch();
  if (!pending->app_notify) {
    std::optional<cpu_account::Step> building(std::in_place, "build");  // a capture helper's worker (cpu_account.hpp)
    cl_int status = next().clBuildProgram(pending->program, count, pending->devices.data(), options, nullptr, nullptr);
    building.reset();
    finish_real_build(*pending, status == CL_SUCCESS);
    return status;
  }
  std::shared_ptr<PendingBuild> shared(pending.release());
  auto* holder = new std::shared_ptr<PendingBuild>(shared);
  cl_int status = next().clBuildProgram(shared->program, count, shared->devices.data(), options, on_real_build_done,
                                        holder);
  // Refused up front: the callback may never come (its small holder is then leaked on purpose),
  // but waiting threads and processes must not wait for this build.
  if (status != CL_SUCCESS && !shared->completed.exchange(true)) {
    finish_real_build(*shared, false, "clBuildProgram returned " + std::to_string(status));
  }
  return status;
}

// Routes the app's program to a shadow: one reference for the app's program to hold. The
// recorded answers go with it.
void install_shadow(PendingBuild& pending, cl_program shadow) {
  serve_recorded_answers(pending.program, std::move(pending.answers), true);
  if (cl_program old = registry().replace_shadow(pending.program, shadow)) next().clReleaseProgram(old);
}

// A hit is served only with a record of answers for every device (decoded when the app asks);
// else its entries are rejected (rebuilt).
bool answers_for_hit(PendingBuild& pending) {
  std::string problem;
  pending.answers = answers_of_hits(*pending.engine, pending.lookups, pending.devices, &problem);
  if (!pending.answers.empty()) return true;
  for (Lookup& lookup : pending.lookups) pending.engine->rejected(lookup, problem);
  return false;
}

// A memory hit with a shadow of this context: the build costs a map lookup and a retain.
void serve_from_memory(PendingBuild& pending) {
  Stopwatch watch;
  Lookup& lookup = pending.lookups.front();
  cl_program shadow = static_cast<cl_program>(lookup.memory.object.get());
  next().clRetainProgram(shadow);
  install_shadow(pending, shadow);
  pending.engine->loaded(lookup, watch.elapsed_us());
}

// Loads every device's cached binary into a shadow program. False: the driver refused them.
bool serve_from_cache(PendingBuild& pending) {
  Stopwatch watch;
  std::vector<const std::string*> binaries;
  for (const Lookup& lookup : pending.lookups) binaries.push_back(&lookup.binary);
  std::string refusal;
  cl_program shadow = build_from_binaries(pending, binaries, &refusal);
  if (!shadow) {
    for (Lookup& lookup : pending.lookups) pending.engine->rejected(lookup, refusal);
    return false;
  }
  std::uint64_t load_us = watch.elapsed_us();
  // Not in a context the app let go of: the tier's reference would keep it alive (context_hooks.cpp).
  if (uses_memory_tier(pending) && app_holds_context(pending.context)) {
    Lookup& lookup = pending.lookups.front();
    next().clRetainProgram(shadow);  // the memory tier's reference
    std::uint64_t compile_us = lookup.sidecar.value("compile_time_us", std::uint64_t{0});
    pending.engine->remember(lookup, memory_value(shadow, lookup.binary.size(), compile_us));
  }
  install_shadow(pending, shadow);
  for (Lookup& lookup : pending.lookups) pending.engine->loaded(lookup, load_us);
  return true;
}

ProgramInputs inputs_of(const TrackedProgram& tracked, const char* options) {
  ProgramInputs inputs;
  inputs.api = Api::opencl;
  inputs.kind = tracked.kind;
  inputs.input = *tracked.input;
  inputs.options = options ? options : "";
  for (const auto& [id, value] : tracked.spec_constants) inputs.spec_constants.push_back({id, value});
  return inputs;
}

cl_int cached_build(cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                    BuildNotify pfn_notify, void* user_data) {
  std::optional<TrackedProgram> tracked = registry().find(program);
  // A program the shim does not key (made from a binary: an app's own cache) never starts the
  // engine (settings, store, compiler identity): apps whose own cache is warm pay nothing for it.
  Engine* engine = tracked ? Engine::instance() : nullptr;
  // Driver-side argument errors and kernels attached to the program are the driver's to report.
  bool well_formed = (num_devices == 0) == (device_list == nullptr) && (pfn_notify || !user_data);
  // While a shadow serves the program the driver never built it and cannot see the kernels made
  // from the shadow: answer what it answers for a program with kernels attached.
  if (tracked && well_formed && shadow_kernels_of(program) > 0) return CL_INVALID_OPERATION;
  bool keyable = engine && tracked && well_formed && kernels_of(program) == 0;
  if (!keyable) return next().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);

  auto pending = std::make_unique<PendingBuild>();
  pending->engine = engine;
  pending->program = program;
  pending->context = tracked->context;
  pending->options = options ? options : "";
  pending->devices = devices_to_build(program, num_devices, device_list);
  if (pending->devices.empty()) {
    if (cl_program old = registry().replace_shadow(program, nullptr)) next().clReleaseProgram(old);
    return next().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);
  }
  pending->app_notify = pfn_notify;
  pending->app_user_data = user_data;

  PreparedProgram prepared = engine->prepare(inputs_of(*tracked, options));
  std::string uncacheable = prepared.uncacheable;
  if (uncacheable.empty() && tracked->kind == ProgramKind::source) {
    uncacheable = source_build_risk(pending->devices, *tracked->input);
  }
  if (!uncacheable.empty()) {
    engine->uncacheable(*prepared.inputs, "", uncacheable);
    if (cl_program old = registry().replace_shadow(program, nullptr)) next().clReleaseProgram(old);
    return next().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);
  }

  LookupContext context;
  // A miss that a capture helper will likely store starts the helper now (Engine::lookup).
  context.build.single_device = pending->devices.size() == 1;
  context.build.lazy_binary = target_of(pending->devices.front(), next()).pocl;
  if (uses_memory_tier(*pending)) {
    context.memory_scope = reinterpret_cast<MemoryScope>(tracked->context);
    context.wait_for_captures = !rebuilds_cheaply(pending->devices.front());
  } else {
    context.may_wait = false;  // it leads several keys at once: waiting on others could deadlock
  }
  bool all_hit = true;
  auto look_up = [&] {
    pending->lookups.clear();  // lookups of an earlier round end unused, holding nothing
    all_hit = true;
    for (cl_device_id device : pending->devices) {
      const OpenClTarget& target = target_of(device, next());
      pending->lookups.push_back(engine->lookup(prepared, target.identity, target.name, context));
      all_hit = all_hit && pending->lookups.back().hit();
    }
  };
  look_up();
  // A miss whose binary this process parked (capture = release): store it, then look again.
  bool stored_parked = false;
  for (const Lookup& lookup : pending->lookups) {
    if (!lookup.hit()) stored_parked = capture_parked_key(lookup.key.key) || stored_parked;
  }
  if (stored_parked) look_up();
  if (needs_refresh(*engine, pending->devices, pending->lookups.front())) {
    pending->earlier_binary = demote_for_refresh(pending->lookups.front());
    pending->refresh = true;
    all_hit = false;
  }
  all_hit = all_hit && answers_for_hit(*pending);
  if (all_hit && pending->lookups.front().memory.object) {
    serve_from_memory(*pending);
    if (pfn_notify) pfn_notify(program, user_data);
    return CL_SUCCESS;
  }
  if (all_hit && serve_from_cache(*pending)) {
    if (pfn_notify) pfn_notify(program, user_data);  // the program is usable now
    return CL_SUCCESS;
  }
  for (Lookup& lookup : pending->lookups) {
    if (lookup.hit()) {  // another device missed: this device's entry is rebuilt and replaced
      lookup.verdict = Verdict::miss;
      lookup.tier = Tier::none;
      lookup.reason = "another device of the same build missed";
      lookup.binary.clear();
    }
  }
  return build_for_real(std::move(pending), options);
}

// The app builds a parked program again with the same inputs (pyopencl builds one program object
// twice): it is built for them already, so the build succeeds without running and the program stays
// parked. Storing it before the rebuild, as for any other rebuild, would read its binary before its
// kernels ran (and serve the rebuild from that binary). No lookup: the first build's is the one.
bool builds_parked_program_again(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                                 const char* options, BuildNotify pfn_notify, void* user_data) {
  if (!is_parked(program)) return false;
  Engine* engine = Engine::instance();
  std::optional<TrackedProgram> tracked = registry().find(program);
  bool well_formed = (num_devices == 0) == (device_list == nullptr) && (pfn_notify || !user_data);
  if (!engine || !tracked || !well_formed || kernels_of(program) > 0) return false;
  std::vector<cl_device_id> devices = devices_to_build(program, num_devices, device_list);
  if (devices.size() != 1) return false;
  PreparedProgram prepared = engine->prepare(inputs_of(*tracked, options));
  if (!prepared.uncacheable.empty()) return false;
  const TargetIdentity& target = target_of(devices.front(), next()).identity;
  return is_parked_as(program, devices, derive_key(*prepared.inputs, target).key);
}

}  // namespace

cl_int build_program(cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                     BuildNotify pfn_notify, void* user_data) {
  drop_deferred_compile(program);  // a build starts over from the source
  capture_released_parked();
  try {
    if (builds_parked_program_again(program, num_devices, device_list, options, pfn_notify, user_data)) {
      if (pfn_notify) pfn_notify(program, user_data);
      return CL_SUCCESS;
    }
  } catch (const std::exception& e) {
    log_warning(std::string("build left uncached: ") + e.what());
  }
  capture_parked_program(program);  // a parked binary is stored before the rebuild replaces it
  try {
    return cached_build(program, num_devices, device_list, options, pfn_notify, user_data);
  } catch (const std::exception& e) {
    log_warning(std::string("build left uncached: ") + e.what());
    return next().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);
  }
}

}  // namespace jitcache::opencl
