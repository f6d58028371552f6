// Program creation and lifetime: remember how each keyable program was made; release shadows
// together with the app's program.
#include <memory>
#include <string>

#include "core/log.hpp"
#include "shim/opencl/app_holds.hpp"
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

// Drops what jitcache recorded for `program`: its record, shadow, answers and deferred compile.
void drop_record(cl_program program) {
  drop_recorded_answers(program);
  std::optional<TrackedProgram> tracked = registry().forget(program);
  if (tracked && tracked->shadow) next().clReleaseProgram(tracked->shadow);
  if (tracked) release_deferred_compile(tracked->deferred);
}

// The app's last hold on `program` is gone (no reference, no kernel): what jitcache keeps for it
// goes. A parked program is stored (jitcache's own reference keeps it alive for that).
void forget_released_program(cl_program program) {
  capture_parked_after_release(program);  // drops the shim's reference once stored
  drop_record(program);
}

}  // namespace

void program_made(cl_program program) {
  drop_record(program);  // whatever was recorded at this handle belonged to a program the driver freed
  program_created(program);
}

cl_program create_program_with_source(cl_context context, cl_uint count, const char** strings,
                                      const size_t* lengths, cl_int* errcode_ret) {
  cl_program program = next().clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  if (!program) return program;
  program_made(program);
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
  program_made(program);
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

cl_program create_program_with_binary(cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                                      const size_t* lengths, const unsigned char** binaries, cl_int* binary_status,
                                      cl_int* errcode_ret) {
  cl_program program = next().clCreateProgramWithBinary(context, num_devices, device_list, lengths, binaries,
                                                        binary_status, errcode_ret);
  if (program) program_made(program);  // never keyed: its builds pass through (docs/opencl-coverage.md)
  return program;
}

cl_program create_program_with_built_in_kernels(cl_context context, cl_uint num_devices,
                                                const cl_device_id* device_list, const char* kernel_names,
                                                cl_int* errcode_ret) {
  cl_program program =
      next().clCreateProgramWithBuiltInKernels(context, num_devices, device_list, kernel_names, errcode_ret);
  if (program) program_made(program);
  return program;
}

cl_int retain_program(cl_program program) {
  cl_int status = next().clRetainProgram(program);
  if (status == CL_SUCCESS) program_retained(program);
  return status;
}

cl_int release_program(cl_program program) {
  capture_released_parked();
  cl_int status = next().clReleaseProgram(program);
  if (status == CL_SUCCESS && program_released(program) == Hold::gone) forget_released_program(program);
  return status;
}

void forget_program_of_released_kernel(const KernelRelease& release) {
  if (release.program_hold == Hold::gone) forget_released_program(release.program);
  // The reference jitcache took for a kernel of the shadow (routing_hooks.cpp), after its record went.
  if (release.kernel == Hold::gone && release.from_shadow) next().clReleaseProgram(release.program);
}

}  // namespace jitcache::opencl
