#include "shim/opencl/load_back.hpp"

#include <csignal>
#include <cstdlib>
#include <string_view>

#include "core/clock.hpp"
#include "capture/load_back_check.hpp"
#include "shim/opencl/driver_quirks.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_queries.hpp"

namespace jitcache::opencl {
namespace {

std::string check(cl_device_id device, const std::string& binary, const std::string& options,
                  const std::vector<std::string>& kernel_names) {
  // Contexts are not among the hooks' functions (next()): the loader's own, as the replay adapter.
  auto create_context = reinterpret_cast<decltype(&clCreateContext)>(find_real_function("clCreateContext"));
  auto release_context = reinterpret_cast<decltype(&clReleaseContext)>(find_real_function("clReleaseContext"));
  if (!create_context || !release_context) return "the OpenCL loader lacks clCreateContext";
  cl_int status = CL_SUCCESS;
  cl_context context = create_context(nullptr, 1, &device, nullptr, nullptr, &status);
  if (!context || status != CL_SUCCESS) return "clCreateContext returned " + std::to_string(status);
#if !defined(_WIN32)  // replays are POSIX-only
  // Tests only: the replay (helper or warm child) dies while the driver loads its binary.
  if (const char* dies = std::getenv("JITCACHE_TEST_HELPER_DIES"); dies && std::string_view(dies) == "loading_back") {
    std::raise(SIGKILL);
  }
#endif
  std::string why;
  // As an app's hit loads it (driver_quirks.hpp): with PoCL's kernel cache off the copy gets a
  // scratch folder of its own, so releasing it leaves the replay's built program its folder.
  cl_program program = create_program_from_cache(context, {device}, {&binary}, &status);
  if (!program || status != CL_SUCCESS) {
    why = "clCreateProgramWithBinary returned " + std::to_string(status);
  } else if ((status = next().clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr)) != CL_SUCCESS) {
    const std::string log = build_log(program, device);
    why = "clBuildProgram of the binary returned " + std::to_string(status) + (log.empty() ? "" : ": " + log.substr(0, 200));
  } else {
    why = kernel_names_mismatch(kernel_names_of(program), kernel_names);
  }
  if (program) next().clReleaseProgram(program);
  release_context(context);
  return why;
}

}  // namespace

std::string load_back(cl_device_id device, const std::string& binary, const std::string& options,
                      const std::vector<std::string>& kernel_names, std::uint64_t* elapsed_us) {
  Stopwatch watch;
  std::string why = check(device, binary, options, kernel_names);
  *elapsed_us = watch.elapsed_us();
  return why;
}

}  // namespace jitcache::opencl
