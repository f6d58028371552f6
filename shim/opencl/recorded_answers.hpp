// What the driver answered about a real build that a program loaded from its binary may answer
// otherwise: CL_KERNEL_ATTRIBUTES (the spec allows an empty string for programs not built from
// source; PoCL gives one), clGetKernelArgInfo (binaries may drop it) and the build log (a binary
// load has its own). Recorded per device with the entry (sidecar field "answers") at the real
// build, answered from the record while a program is served from the cache (recorded_queries.cpp).
// Read back as hostile input: shape checked and every size capped; a record that fails the check
// makes the entry unusable (rebuilt and replaced), never a wrong or missing answer.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

// Bump on any change of the record's shape: a record of another version is not served.
inline constexpr int kAnswersVersion = 1;

// One query's answer: the status and, on success, the bytes the driver returned.
struct RecordedAnswer {
  cl_int status = CL_SUCCESS;
  std::string bytes;
};

// The clGetKernelArgInfo queries, in this order.
inline constexpr std::array<cl_kernel_arg_info, 5> kArgQueries = {
    CL_KERNEL_ARG_ADDRESS_QUALIFIER, CL_KERNEL_ARG_ACCESS_QUALIFIER, CL_KERNEL_ARG_TYPE_NAME,
    CL_KERNEL_ARG_TYPE_QUALIFIER, CL_KERNEL_ARG_NAME};

struct RecordedKernel {
  RecordedAnswer attributes;                                       // CL_KERNEL_ATTRIBUTES
  std::vector<std::array<RecordedAnswer, kArgQueries.size()>> args;  // per argument, kArgQueries
};

struct RecordedAnswers {
  std::string build_log;  // CL_PROGRAM_BUILD_LOG of the entry's device, without its NUL
  std::map<std::string, RecordedKernel> kernels;  // by kernel name, or by obfuscated_name(name)
  bool kernel_names_hashed = false;               // written by `jitcache pack --obfuscate`
};

// At the real build: asks the driver about each kernel of `program` (nothing is asked through the
// hooks). Empty with `problem` set when the answers exceed the caps below.
std::map<std::string, RecordedKernel> read_kernel_answers(cl_program program, const std::vector<std::string>& names,
                                                          std::string* problem);
// The sidecar's "answers" for one device; null with `problem` set when over the caps.
nlohmann::json answers_json(const std::string& build_log, const std::map<std::string, RecordedKernel>& kernels,
                            std::string* problem);
// The checked record from a hit's answers (Lookup::answers: JSON text, null when the entry has
// none), decoded without an nlohmann tree; null with `problem` set when absent or malformed.
std::shared_ptr<const RecordedAnswers> parse_answers(const std::string* text, std::string* problem);

// Copies a recorded answer out as the driver would (CL_INVALID_VALUE for a buffer too small).
cl_int give_answer(const RecordedAnswer& answer, size_t size, void* value, size_t* size_ret);

}  // namespace jitcache::opencl
