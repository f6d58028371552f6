// clCompileProgram + clLinkProgram through the cache.
//
// A compiled object is keyed like a source build (kind "compiled"), with the contents of the
// input_headers programs as headers. The linked program is keyed over its inputs' digests, the
// link options and each device. When the cache holds a compiled object, clCompileProgram is
// deferred: nothing runs until a link misses or the app asks what the cache did not record about
// the object (deferred_answers.cpp). So a linked program served from the cache compiles nothing.
// See docs/opencl-coverage.md.
#include <memory>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/engine.hpp"
#include "core/log.hpp"
#include "shim/opencl/binary_capture.hpp"
#include "shim/opencl/deferred_compile.hpp"
#include "shim/opencl/entry_refresh.hpp"
#include "shim/opencl/driver_quirks.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_queries.hpp"
#include "shim/opencl/program_registry.hpp"
#include "shim/opencl/recorded_queries.hpp"
#include "shim/opencl/target_identity.hpp"

namespace jitcache::opencl {
namespace {

constexpr const char* kInputHeaderPath = "(clCompileProgram input_headers)";

std::vector<cl_device_id> context_devices(cl_context context) {
  size_t size = 0;
  if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::vector<cl_device_id> devices(size / sizeof(cl_device_id));
  if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, size, devices.data(), nullptr) != CL_SUCCESS) return {};
  return devices;
}

// One lookup per device; true when every device hit.
bool lookup_all(Engine& engine, const PreparedProgram& prepared, const std::vector<cl_device_id>& devices,
                std::vector<Lookup>& lookups) {
  bool all_hit = true;
  for (cl_device_id device : devices) {
    const OpenClTarget& target = target_of(device, next());
    lookups.push_back(engine.lookup(prepared, target.identity, target.name));
    all_hit = all_hit && lookups.back().hit();
  }
  return all_hit;
}

// A hit on some devices only: those entries are rebuilt with the rest.
void demote_hits(std::vector<Lookup>& lookups) {
  for (Lookup& lookup : lookups) {
    if (!lookup.hit()) continue;
    lookup.verdict = Verdict::miss;
    lookup.reason = "another device of the same build missed";
    lookup.binary.clear();
  }
}

// After a real compile or link: store each device's binary (binary_capture.hpp: a single-device
// linked program is parked like a build under capture = release or a refresh; a compiled object is
// stored now, since no code is generated from it later), or record the failure.
void store_results(Engine& engine, std::vector<Lookup>& lookups, cl_program program,
                   const std::vector<cl_device_id>& devices, bool succeeded, std::uint64_t build_us,
                   bool refresh = false, std::shared_ptr<const std::string> earlier_binary = nullptr) {
  // Linked lookups have no memory scope: the flag only lets a single-device link be parked.
  const bool parkable = !lookups.empty() && lookups.front().program->kind == ProgramKind::linked && devices.size() == 1;
  finish_build({&engine, program, devices, std::move(lookups), build_us, parkable, refresh, std::move(earlier_binary)},
               succeeded, "the driver's compile or link failed");
}

// The compile's inputs, or a reason it cannot be keyed.
std::string compiled_inputs(const TrackedProgram& tracked, const char* options, cl_uint num_input_headers,
                            const cl_program* input_headers, const char** header_include_names,
                            ProgramInputs& inputs) {
  if (tracked.kind != ProgramKind::source) return "program was not created from source";
  inputs.api = Api::opencl;
  inputs.kind = ProgramKind::compiled;
  inputs.input = *tracked.input;
  inputs.options = options ? options : "";
  for (cl_uint i = 0; i < num_input_headers; ++i) {
    if (!header_include_names[i]) return "an input header has no include name";  // the driver says so
    std::optional<TrackedProgram> header = registry().find(input_headers[i]);
    if (!header || header->kind != ProgramKind::source) return "an input header was not created from source";
    inputs.headers.push_back({header_include_names[i], kInputHeaderPath, true, xxh3_128(*header->input)});
  }
  return {};
}

cl_int real_compile(cl_program program, const DeferredCompile& compile) {
  const char** names = nullptr;
  std::vector<const char*> name_pointers;
  for (const std::string& name : compile.header_names) name_pointers.push_back(name.c_str());
  if (!name_pointers.empty()) names = name_pointers.data();
  return next().clCompileProgram(program, static_cast<cl_uint>(compile.devices.size()),
                                 compile.devices.empty() ? nullptr : compile.devices.data(), compile.options.c_str(),
                                 static_cast<cl_uint>(compile.headers.size()),
                                 compile.headers.empty() ? nullptr : compile.headers.data(), names, nullptr, nullptr);
}

cl_int cached_compile(cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                      cl_uint num_input_headers, const cl_program* input_headers, const char** header_include_names,
                      BuildNotify pfn_notify, void* user_data) {
  drop_deferred_compile(program);  // a new compile replaces one not run yet
  std::optional<TrackedProgram> tracked = registry().find(program);
  Engine* engine = tracked ? Engine::instance() : nullptr;  // untracked: no engine start (build_hook.cpp)
  bool well_formed = (num_devices == 0) == (device_list == nullptr) && (pfn_notify || !user_data) &&
                     (num_input_headers == 0) == (input_headers == nullptr) &&
                     (num_input_headers == 0) == (header_include_names == nullptr);
  auto compile_for_real = [&] {
    return next().clCompileProgram(program, num_devices, device_list, options, num_input_headers, input_headers,
                                   header_include_names, pfn_notify, user_data);
  };
  if (!engine || !tracked || !well_formed || kernels_of(program) > 0) {
    if (tracked) registry().set_compiled(program, {}, nullptr);
    return compile_for_real();
  }
  ProgramInputs inputs;
  std::string unkeyable =
      compiled_inputs(*tracked, options, num_input_headers, input_headers, header_include_names, inputs);
  PreparedProgram prepared = engine->prepare(std::move(inputs));
  std::vector<cl_device_id> devices = devices_to_build(program, num_devices, device_list);
  if (unkeyable.empty()) unkeyable = prepared.uncacheable;
  if (unkeyable.empty() && devices.empty()) unkeyable = "program has no devices";
  if (unkeyable.empty()) unkeyable = source_build_risk(devices, *tracked->input);
  if (!unkeyable.empty()) {
    engine->uncacheable(*prepared.inputs, "", unkeyable);
    registry().set_compiled(program, {}, nullptr);
    return compile_for_real();
  }
  std::string digest = derive_key(*prepared.inputs, TargetIdentity{}).key.hex();

  std::vector<Lookup> lookups;
  if (lookup_all(*engine, prepared, devices, lookups)) {
    auto deferred = std::make_shared<DeferredCompile>();
    if (num_devices) deferred->devices = devices;
    deferred->options = options ? options : "";
    for (cl_uint i = 0; i < num_input_headers; ++i) {
      next().clRetainProgram(input_headers[i]);
      deferred->headers.push_back(input_headers[i]);
      deferred->header_names.push_back(header_include_names[i]);
    }
    deferred->compiled_for = devices;  // queries on the object are answered from these records
    for (Lookup& lookup : lookups) {
      deferred->binaries.push_back(lookup.binary);  // a copy: loaded() still needs it
      // The log: the recorded answers' (decoded if the app asks), else the sidecar's excerpt.
      deferred->answers.push_back(lookup.answers ? answers_of_hit(*engine, lookup) : nullptr);
      deferred->logs.push_back(recorded_build_log(lookup.sidecar));
    }
    release_deferred_compile(registry().set_compiled(program, digest, deferred));
    for (Lookup& lookup : lookups) {
      lookup.reason = "compile deferred: runs only if a link of this object misses";
      engine->loaded(lookup, 0);
    }
    if (pfn_notify) pfn_notify(program, user_data);
    return CL_SUCCESS;
  }
  demote_hits(lookups);
  Stopwatch watch;
  // Synchronous even when the app asked for a callback: the object is read back right after.
  cl_int status = next().clCompileProgram(program, num_devices, device_list, options, num_input_headers, input_headers,
                                          header_include_names, nullptr, nullptr);
  bool succeeded = status == CL_SUCCESS && build_succeeded(program, devices);
  store_results(*engine, lookups, program, devices, succeeded, watch.elapsed_us());
  registry().set_compiled(program, succeeded ? digest : std::string(), nullptr);
  // The compile ran to completion (successfully or not): an app waiting on its callback gets it.
  if (pfn_notify && (status == CL_SUCCESS || status == CL_COMPILE_PROGRAM_FAILURE)) pfn_notify(program, user_data);
  return status;
}

// The linked program's inputs, or why it cannot be keyed.
std::string linked_inputs(const char* options, cl_uint num_input_programs, const cl_program* input_programs,
                          ProgramInputs& inputs) {
  inputs.api = Api::opencl;
  inputs.kind = ProgramKind::linked;
  inputs.options = options ? options : "";
  if (inputs.options.find("-create-library") != std::string::npos) return "link creates a library";
  for (cl_uint i = 0; i < num_input_programs; ++i) {
    std::optional<TrackedProgram> input = registry().find(input_programs[i]);
    if (!input || input->compiled_digest.empty()) {
      return "input program " + std::to_string(i) +
             " has no keyed compile (created from a binary, a failed or unkeyable compile, or a library)";
    }
    inputs.input += input->compiled_digest + "\n";
  }
  return {};
}

// Loads the cached linked binaries as the linked program; nullptr when the driver refused them.
cl_program load_linked(Engine& engine, cl_context context, const std::vector<cl_device_id>& devices,
                       std::vector<Lookup>& lookups, const char* options) {
  std::string problem;
  AnswersByDevice answers = answers_of_hits(engine, lookups, devices, &problem);
  if (answers.empty()) {  // the entries could not answer as the link did: rebuilt and replaced
    for (Lookup& lookup : lookups) engine.rejected(lookup, problem);
    return nullptr;
  }
  Stopwatch watch;
  std::vector<const std::string*> binaries;
  for (const Lookup& lookup : lookups) binaries.push_back(&lookup.binary);
  cl_uint count = static_cast<cl_uint>(devices.size());
  cl_int status = CL_SUCCESS;
  cl_program program = create_program_from_cache(context, devices, binaries, &status);
  std::string refusal;
  if (!program || status != CL_SUCCESS) {
    refusal = "clCreateProgramWithBinary returned " + std::to_string(status);
  } else if ((status = next().clBuildProgram(program, count, devices.data(), options, nullptr, nullptr)) !=
             CL_SUCCESS) {
    refusal = "clBuildProgram of the binary returned " + std::to_string(status);
  }
  if (!refusal.empty()) {
    if (program) next().clReleaseProgram(program);
    for (Lookup& lookup : lookups) engine.rejected(lookup, refusal);
    return nullptr;
  }
  std::uint64_t load_us = watch.elapsed_us();
  program_made(program);  // the app's now
  serve_recorded_answers(program, std::move(answers), false);
  for (Lookup& lookup : lookups) engine.loaded(lookup, load_us);
  return program;
}

cl_program real_link(cl_context context, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                     cl_uint num_input_programs, const cl_program* input_programs, BuildNotify pfn_notify,
                     void* user_data, cl_int* errcode_ret) {
  for (cl_uint i = 0; i < num_input_programs; ++i) run_deferred_compile(input_programs[i]);
  cl_program program = next().clLinkProgram(context, num_devices, device_list, options, num_input_programs,
                                            input_programs, pfn_notify, user_data, errcode_ret);
  if (program) program_made(program);
  return program;
}

cl_program cached_link(cl_context context, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                       cl_uint num_input_programs, const cl_program* input_programs, BuildNotify pfn_notify,
                       void* user_data, cl_int* errcode_ret) {
  Engine* engine = Engine::instance();
  bool well_formed = (num_devices == 0) == (device_list == nullptr) && (pfn_notify || !user_data) &&
                     num_input_programs > 0 && input_programs;
  if (!engine || !well_formed) {
    return real_link(context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify,
                     user_data, errcode_ret);
  }
  ProgramInputs inputs;
  std::string unkeyable = linked_inputs(options, num_input_programs, input_programs, inputs);
  PreparedProgram prepared = engine->prepare(std::move(inputs));
  std::vector<cl_device_id> devices =
      num_devices ? std::vector<cl_device_id>(device_list, device_list + num_devices) : context_devices(context);
  if (unkeyable.empty() && devices.empty()) unkeyable = "context has no devices";
  if (!unkeyable.empty()) {
    engine->uncacheable(*prepared.inputs, "", unkeyable);
    return real_link(context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify,
                     user_data, errcode_ret);
  }

  std::vector<Lookup> lookups;
  bool all_hit = lookup_all(*engine, prepared, devices, lookups);
  const bool refresh = needs_refresh(*engine, devices, lookups.front());
  std::shared_ptr<const std::string> earlier_binary;
  if (refresh) earlier_binary = demote_for_refresh(lookups.front());
  if (all_hit && !refresh) {
    if (cl_program program = load_linked(*engine, context, devices, lookups, options)) {
      if (errcode_ret) *errcode_ret = CL_SUCCESS;
      if (pfn_notify) pfn_notify(program, user_data);
      return program;
    }
  }
  demote_hits(lookups);
  Stopwatch watch;
  cl_int status = CL_SUCCESS;
  // Synchronous even when the app asked for a callback: the binaries are read back right after.
  cl_program program = real_link(context, num_devices, device_list, options, num_input_programs, input_programs,
                                 nullptr, nullptr, &status);
  bool succeeded = program && status == CL_SUCCESS && build_succeeded(program, devices);
  store_results(*engine, lookups, program, devices, succeeded, watch.elapsed_us(), refresh, std::move(earlier_binary));
  if (errcode_ret) *errcode_ret = status;
  if (program && pfn_notify) pfn_notify(program, user_data);
  return program;
}

}  // namespace

cl_int run_deferred_compile(cl_program program) {
  std::shared_ptr<DeferredCompile> deferred = registry().take_deferred(program);
  if (!deferred) return CL_SUCCESS;
  log_info("running a deferred clCompileProgram: the driver needs the compiled object");
  cl_int status = real_compile(program, *deferred);
  release_deferred_compile(std::move(deferred));
  return status;
}

void drop_deferred_compile(cl_program program) { release_deferred_compile(registry().take_deferred(program)); }

void release_deferred_compile(std::shared_ptr<DeferredCompile> deferred) {
  if (!deferred) return;
  for (cl_program header : deferred->headers) next().clReleaseProgram(header);  // jitcache's references
}

cl_int compile_program(cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                       cl_uint num_input_headers, const cl_program* input_headers, const char** header_include_names,
                       BuildNotify pfn_notify, void* user_data) {
  try {
    return cached_compile(program, num_devices, device_list, options, num_input_headers, input_headers,
                          header_include_names, pfn_notify, user_data);
  } catch (const std::exception& e) {
    log_warning(std::string("compile left uncached: ") + e.what());
    run_deferred_compile(program);
    return next().clCompileProgram(program, num_devices, device_list, options, num_input_headers, input_headers,
                                   header_include_names, pfn_notify, user_data);
  }
}

cl_program link_program(cl_context context, cl_uint num_devices, const cl_device_id* device_list, const char* options,
                        cl_uint num_input_programs, const cl_program* input_programs, BuildNotify pfn_notify,
                        void* user_data, cl_int* errcode_ret) {
  try {
    return cached_link(context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify,
                       user_data, errcode_ret);
  } catch (const std::exception& e) {
    log_warning(std::string("link left uncached: ") + e.what());
    return real_link(context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify,
                     user_data, errcode_ret);
  }
}

}  // namespace jitcache::opencl
