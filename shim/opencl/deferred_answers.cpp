// Queries on a compiled object whose clCompileProgram was deferred (the cache holds the object),
// answered from what the cache recorded instead of compiling: apps such as hashcat ask for the
// build log right after every compile, and running the compile for that would cost a warm run
// all of its compile time. Only answers the cache knows exactly are given here; anything else
// (kernel names, global variable sizes, a device the compile did not target, a log cut to the
// sidecar's excerpt) returns false and the caller runs the compile and asks the driver.
#include <cstring>
#include <optional>

#include "shim/opencl/deferred_compile.hpp"
#include "shim/opencl/lazy_answers.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_queries.hpp"

namespace jitcache::opencl {
namespace {

// The OpenCL convention for an info query: a too-small buffer is CL_INVALID_VALUE.
cl_int answer(const void* data, size_t size, size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  if (param_value && param_value_size < size) return CL_INVALID_VALUE;
  if (param_value && size) std::memcpy(param_value, data, size);
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

cl_int answer_text(const std::string& text, size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  return answer(text.c_str(), text.size() + 1, param_value_size, param_value, param_value_size_ret);
}

std::optional<size_t> device_index(const DeferredCompile& deferred, cl_device_id device) {
  for (size_t d = 0; d < deferred.compiled_for.size(); ++d) {
    if (deferred.compiled_for[d] == device) return d;
  }
  return std::nullopt;
}

// The recorded binary of each of the program's devices, in CL_PROGRAM_DEVICES order; empty when
// one is not known.
std::vector<const std::string*> binaries_by_program_device(cl_program program, const DeferredCompile& deferred) {
  std::vector<cl_device_id> devices = program_array<cl_device_id>(program, CL_PROGRAM_DEVICES);
  std::vector<const std::string*> binaries;
  for (cl_device_id device : devices) {
    std::optional<size_t> d = device_index(deferred, device);
    if (!d || *d >= deferred.binaries.size() || deferred.binaries[*d].empty()) return {};
    binaries.push_back(&deferred.binaries[*d]);
  }
  return binaries;
}

// The compile's whole log from the recorded answers, else the sidecar's excerpt when it is whole
// (an entry without answers, or whose answers proved malformed); none: unknown.
std::optional<std::string> recorded_log(const DeferredCompile& deferred, size_t d) {
  if (d < deferred.answers.size() && deferred.answers[d]) {
    if (std::shared_ptr<const RecordedAnswers> answers = deferred.answers[d]->get()) return answers->build_log;
  }
  return d < deferred.logs.size() ? deferred.logs[d] : std::nullopt;
}

}  // namespace

bool answer_deferred_build_info(cl_program program, cl_device_id device, cl_program_build_info param_name,
                                size_t param_value_size, void* param_value, size_t* param_value_size_ret,
                                cl_int& status) {
  std::shared_ptr<DeferredCompile> deferred = registry().deferred_of(program);
  if (!deferred) return false;
  std::optional<size_t> d = device_index(*deferred, device);
  if (!d) return false;
  switch (param_name) {
    case CL_PROGRAM_BUILD_STATUS: {
      cl_build_status value = CL_BUILD_SUCCESS;  // the cache holds only objects that compiled
      status = answer(&value, sizeof value, param_value_size, param_value, param_value_size_ret);
      return true;
    }
    case CL_PROGRAM_BUILD_OPTIONS:  // the options the compile was given (the spec's answer)
      status = answer_text(deferred->options, param_value_size, param_value, param_value_size_ret);
      return true;
    case CL_PROGRAM_BUILD_LOG: {
      std::optional<std::string> log = recorded_log(*deferred, *d);
      if (!log) return false;
      status = answer_text(*log, param_value_size, param_value, param_value_size_ret);
      return true;
    }
    case CL_PROGRAM_BINARY_TYPE: {
      cl_program_binary_type value = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
      status = answer(&value, sizeof value, param_value_size, param_value, param_value_size_ret);
      return true;
    }
    default:
      return false;
  }
}

bool answer_deferred_program_info(cl_program program, cl_program_info param_name, size_t param_value_size,
                                  void* param_value, size_t* param_value_size_ret, cl_int& status) {
  if (param_name != CL_PROGRAM_BINARY_SIZES && param_name != CL_PROGRAM_BINARIES) return false;
  std::shared_ptr<DeferredCompile> deferred = registry().deferred_of(program);
  if (!deferred) return false;
  std::vector<const std::string*> binaries = binaries_by_program_device(program, *deferred);
  if (binaries.empty()) return false;
  status = answer_binary_query(param_name, binaries, param_value_size, param_value, param_value_size_ret);
  return true;
}

}  // namespace jitcache::opencl
