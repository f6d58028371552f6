// Answers from the record (recorded_answers.hpp) for programs the cache serves: the app's program
// while a shadow serves it, and programs clLinkProgram created from cached binaries. Every other
// query, and every query on programs built for real, goes to the driver.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "shim/opencl/lazy_answers.hpp"
#include "shim/opencl/recorded_answers.hpp"

namespace jitcache::opencl {

using AnswersByDevice = std::map<cl_device_id, std::shared_ptr<const LazyAnswers>>;

// At the real build: each device's build log and answers to store, or `problem` (then nothing may
// be stored: a hit could not answer as the build did).
struct RecordedBuild {
  std::vector<std::string> logs;
  std::vector<nlohmann::json> answers;
  std::string problem;
};
RecordedBuild record_build(cl_program program, const std::vector<cl_device_id>& devices,
                           const std::vector<std::string>& kernel_names);

// On a hit: every device's recorded answers, decoded when the app first asks (lazy_answers.hpp;
// a malformed record then drops its entry through `engine`), or empty with `problem` set when an
// entry has none (written before answers were recorded: the entries are rejected and rebuilt).
AnswersByDevice answers_of_hits(Engine& engine, const std::vector<Lookup>& lookups,
                                const std::vector<cl_device_id>& devices, std::string* problem);
// One hit's answers, decoded when first asked for; a malformed record drops the entry then.
std::shared_ptr<const LazyAnswers> answers_of_hit(Engine& engine, const Lookup& lookup);

// `program` is served from a shadow (answers valid while it has one) or is a linked program
// created from cached binaries (answers valid until its last release).
void serve_recorded_answers(cl_program program, AnswersByDevice answers, bool via_shadow);
void drop_recorded_answers(cl_program program);

// The hooks' side: true when the answer came from the record (`status` is then the result).
bool answer_recorded_build_info(cl_program program, cl_device_id device, cl_program_build_info param, size_t size,
                                void* value, size_t* size_ret, cl_int& status);
bool answer_recorded_kernel_info(cl_kernel kernel, cl_kernel_info param, size_t size, void* value, size_t* size_ret,
                                 cl_int& status);
bool answer_recorded_arg_info(cl_kernel kernel, cl_uint arg, cl_kernel_arg_info param, size_t size, void* value,
                              size_t* size_ret, cl_int& status);

}  // namespace jitcache::opencl
