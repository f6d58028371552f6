#include "shim/opencl/replay.hpp"

#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

#include <dlfcn.h>

#include "shim/opencl/hooks.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_queries.hpp"
#include "shim/opencl/target_identity.hpp"

namespace jitcache::opencl {
namespace {

template <typename Function>
Function loader_function(const char* name) {
  return reinterpret_cast<Function>(find_real_function(name));
}

cl_program create_program(cl_context context, const RecordedInputs& recorded, cl_int* status) {
  if (recorded.kind == ProgramKind::il) {
    return create_program_with_il(context, recorded.input.data(), recorded.input.size(), status);
  }
  const char* text = recorded.input.data();
  size_t length = recorded.input.size();
  return create_program_with_source(context, 1, &text, &length, status);
}

// One context per device for the life of the process, never released: PoCL unloads its compiler
// state (the kernel library, costly to load again) when the last context
// goes, and a capture helper's worker builds program after program.
cl_context context_for(cl_device_id id, cl_int* status) {
  static std::mutex mutex;
  static std::map<cl_device_id, cl_context> contexts;
  std::lock_guard lock(mutex);
  if (auto it = contexts.find(id); it != contexts.end()) return it->second;
  auto create_context = loader_function<decltype(&clCreateContext)>("clCreateContext");
  if (!create_context) return *status = CL_INVALID_OPERATION, nullptr;
  cl_context context = create_context(nullptr, 1, &id, nullptr, nullptr, status);
  if (context && *status == CL_SUCCESS) contexts[id] = context;
  return context;
}

class OpenClReplay : public ReplayAdapter {
 public:
  std::string open() override {
    // RTLD_GLOBAL: the adapter finds the loader's functions as it finds them behind an app.
    if (!::dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL) && !::dlopen("libOpenCL.so", RTLD_NOW | RTLD_GLOBAL)) {
      return "no OpenCL loader (libOpenCL.so.1) could be loaded";
    }
    return {};
  }

  std::vector<ReplayDevice> devices(std::string* why) override {
    std::vector<ReplayDevice> found;
    auto get_platforms = loader_function<decltype(&clGetPlatformIDs)>("clGetPlatformIDs");
    auto get_devices = loader_function<decltype(&clGetDeviceIDs)>("clGetDeviceIDs");
    if (!get_platforms || !get_devices) return *why = "no OpenCL loader (libOpenCL.so.1) could be loaded", found;
    cl_uint platform_count = 0;
    if (get_platforms(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0) {
      return *why = "no OpenCL platform", found;
    }
    std::vector<cl_platform_id> platforms(platform_count);
    get_platforms(platform_count, platforms.data(), nullptr);
    for (cl_platform_id platform : platforms) {
      cl_uint count = 0;
      if (get_devices(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
      std::vector<cl_device_id> ids(count);
      get_devices(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
      for (cl_device_id id : ids) {
        const OpenClTarget& target = target_of(id, next());
        found.push_back({target.name, target.identity, id, platform, {}});
      }
    }
    return found;
  }

  // The device's context, and to load the compiler a one-line kernel built straight through the
  // driver: PoCL loads its kernel library at a context's first build, which is most of a small
  // program's first build.
  void warm_up(const ReplayDevice& device, bool load_compiler) override {
    auto create = loader_function<decltype(&clCreateProgramWithSource)>("clCreateProgramWithSource");
    auto build = loader_function<decltype(&clBuildProgram)>("clBuildProgram");
    auto release = loader_function<decltype(&clReleaseProgram)>("clReleaseProgram");
    if (!create || !build || !release) return;
    cl_device_id id = static_cast<cl_device_id>(device.handle);
    cl_int status = CL_SUCCESS;
    cl_context context = context_for(id, &status);
    if (!context || status != CL_SUCCESS || !load_compiler) return;
    const char* text = "__kernel void jitcache_warm_up(__global int* x) { x[get_global_id(0)] = 1; }";
    cl_program program = create(context, 1, &text, nullptr, &status);
    if (!program) return;
    (void)build(program, 1, &id, "", nullptr, nullptr);
    release(program);
  }

  std::string build(const ReplayDevice& device, const ReplayRequest& request) override {
    cl_device_id id = static_cast<cl_device_id>(device.handle);
    cl_int status = CL_SUCCESS;
    cl_context context = context_for(id, &status);
    if (!context || status != CL_SUCCESS) return "clCreateContext returned " + std::to_string(status);
    std::string why;
    cl_program program = create_program(context, request.inputs, &status);
    if (program && status == CL_SUCCESS) {
      for (const SpecConstant& constant : request.inputs.spec_constants) {
        if (status != CL_SUCCESS) break;
        status = set_program_specialization_constant(program, constant.id, constant.value.size(), constant.value.data());
      }
      if (status == CL_SUCCESS) {
        status = build_program(program, 1, &id, request.inputs.options.c_str(), nullptr, nullptr);
        // Tests only: the helper dies between the driver's build and the store.
        if (const char* dies = std::getenv("JITCACHE_TEST_HELPER_DIES"); request.expected_key && dies &&
                                                                           std::string_view(dies) == "after_build") {
          ::raise(SIGKILL);
        }
        if (status != CL_SUCCESS) {
          std::string log = build_log(program, id);
          why = "the driver's build failed (" + std::to_string(status) + ")" + (log.empty() ? "" : ": " + log.substr(0, 400));
        }
      } else {
        why = "clSetProgramSpecializationConstant returned " + std::to_string(status);
      }
    } else {
      why = "creating the program returned " + std::to_string(status);
    }
    if (program) release_program(program);
    return why;
  }
};

}  // namespace

std::unique_ptr<ReplayAdapter> replay_adapter() { return std::make_unique<OpenClReplay>(); }

}  // namespace jitcache::opencl
