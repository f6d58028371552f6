// Program creation and lifetime: remember how each keyable program was made; release shadows
// together with the app's program.
#include <atomic>
#include <memory>
#include <string>

#include "core/log.hpp"
#include "shim/opencl/binary_capture.hpp"
#include "shim/opencl/deferred_compile.hpp"
#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_registry.hpp"
#include "shim/opencl/recorded_queries.hpp"

namespace jitcache::opencl {
namespace {

std::string concatenate_sources(cl_uint count, const char** strings, const size_t* lengths) {
  std::string source;
  for (cl_uint i = 0; i < count; ++i) {
    if (!strings[i]) continue;
    // A zero or absent length means the string is NUL-terminated.
    size_t length = lengths && lengths[i] ? lengths[i] : std::char_traits<char>::length(strings[i]);
    source.append(strings[i], length);
  }
  return source;
}

}  // namespace

cl_uint reference_count(cl_program program) {
  cl_uint count = 0;
  if (next().clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof count, &count, nullptr) != CL_SUCCESS) {
    return 0;
  }
  return count;
}

cl_program create_program_with_source(cl_context context, cl_uint count, const char** strings,
                                      const size_t* lengths, cl_int* errcode_ret) {
  cl_program program = next().clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  if (!program) return program;
  try {
    auto source = std::make_shared<const std::string>(concatenate_sources(count, strings, lengths));
    registry().track(program, {ProgramKind::source, std::move(source), context, {}, nullptr, {}, nullptr});
  } catch (const std::exception& e) {
    log_warning(std::string("program left uncached: ") + e.what());
  }
  return program;
}

cl_program create_program_with_il(cl_context context, const void* il, size_t length, cl_int* errcode_ret) {
  cl_program program = next().clCreateProgramWithIL(context, il, length, errcode_ret);
  if (!program) return program;
  try {
    auto bytes = std::make_shared<const std::string>(static_cast<const char*>(il), length);
    registry().track(program, {ProgramKind::il, std::move(bytes), context, {}, nullptr, {}, nullptr});
  } catch (const std::exception& e) {
    log_warning(std::string("program left uncached: ") + e.what());
  }
  return program;
}

cl_int set_program_specialization_constant(cl_program program, cl_uint spec_id, size_t spec_size,
                                           const void* spec_value) {
  // A source program served from a shadow was never built by the driver, and some drivers
  // (PoCL 3.1) assert on an unbuilt source program here: ask the built shadow, which gives the
  // driver's answer for a program that is not IL.
  auto tracked = registry().find(program);
  cl_program target = tracked && tracked->shadow && tracked->kind != ProgramKind::il ? tracked->shadow : program;
  cl_int status = next().clSetProgramSpecializationConstant(target, spec_id, spec_size, spec_value);
  if (status == CL_SUCCESS && spec_value) {
    try {
      registry().set_spec_constant(program, spec_id, std::string(static_cast<const char*>(spec_value), spec_size));
    } catch (...) {
      registry().forget(program);  // an incomplete record must not key a build
    }
  }
  return status;
}

namespace {

// The app's last reference to `program` is gone.
void forget_released_program(cl_program program) {
  capture_parked_program(program);  // drops the shim's reference too
  drop_recorded_answers(program);
  std::optional<TrackedProgram> tracked = registry().forget(program);
  if (tracked && tracked->shadow) next().clReleaseProgram(tracked->shadow);
  if (tracked) release_deferred_compile(tracked->deferred);
}

}  // namespace

void forget_if_only_parked(cl_program program) {
  if (is_parked(program) && reference_count(program) == 1) forget_released_program(program);
}

namespace {
enum KernelReferences { kUnknown, kCounted, kNotCounted };
std::atomic<int> g_kernel_references{kUnknown};
}  // namespace

bool kernel_references_known() { return g_kernel_references != kUnknown; }

void learn_whether_kernels_hold_their_program(cl_uint references_before, cl_uint references_after) {
  if (references_before == 0) return;  // the driver did not say
  g_kernel_references = references_after == references_before + 1 ? kCounted : kNotCounted;
}

bool freed_with_its_last_kernel(cl_program program) {
  return g_kernel_references == kCounted && !is_parked(program) && registry().tracks(program) &&
         reference_count(program) == 1;
}

void forget_freed_program(cl_program program) { forget_released_program(program); }

cl_int release_program(cl_program program) {
  // The last release of a tracked program takes its shadow with it. A parked program (see
  // binary_capture.hpp) also holds one reference of the shim's, dropped once it is stored.
  const cl_uint shim_references = is_parked(program) ? 1 : 0;
  const bool tracked = registry().tracks(program);
  bool last = tracked && reference_count(program) == 1 + shim_references;
  // A parked linked program (compile_link_hooks.cpp) is not tracked: stored at the app's last release.
  bool last_parked = !tracked && shim_references && reference_count(program) == 1 + shim_references;
  // A linked program created from cached binaries is not tracked, but its answers are.
  bool last_answered = !last && has_recorded_answers(program) && reference_count(program) == 1;
  cl_int status = next().clReleaseProgram(program);
  if (status == CL_SUCCESS && last) forget_released_program(program);
  if (status == CL_SUCCESS && last_parked) capture_parked_program(program);
  if (status == CL_SUCCESS && last_answered) drop_recorded_answers(program);
  return status;
}

}  // namespace jitcache::opencl
