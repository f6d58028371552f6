#include "shim/opencl/recorded_queries.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "hashing/digest.hpp"
#include "shim/opencl/app_holds.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_queries.hpp"
#include "shim/opencl/program_registry.hpp"

namespace jitcache::opencl {
namespace {

struct Served {
  AnswersByDevice answers;
  bool via_shadow = false;
};

struct ServedPrograms {
  std::mutex mutex;
  std::unordered_map<cl_program, Served> programs;
  std::atomic<bool> any{false};  // lets queries on never-served programs skip the lock
};

ServedPrograms& served_programs() {
  static ServedPrograms* s = new ServedPrograms;  // never destroyed: hooks may run during exit
  return *s;
}

// The record answering for `program` on `device` (nullptr device: any, for kernel queries), as
// the hit left it (decoded by the first query that asks); null when none.
std::shared_ptr<const LazyAnswers> lazy_answers_for(cl_program program, cl_device_id device) {
  if (!served_programs().any.load(std::memory_order_relaxed)) return nullptr;
  Served served;
  {
    std::lock_guard lock(served_programs().mutex);
    auto it = served_programs().programs.find(program);
    if (it == served_programs().programs.end()) return nullptr;
    served = it->second;
  }
  if (served.via_shadow && !registry().shadow_of(program)) return nullptr;  // built for real since
  if (!device) return served.answers.empty() ? nullptr : served.answers.begin()->second;
  auto found = served.answers.find(device);
  return found == served.answers.end() ? nullptr : found->second;
}

// The record decoded now if no query asked before; null also when it proved malformed (the
// driver answers).
std::shared_ptr<const RecordedAnswers> answers_for(cl_program program, cl_device_id device) {
  std::shared_ptr<const LazyAnswers> lazy = lazy_answers_for(program, device);
  return lazy ? lazy->get() : nullptr;
}

// The record for the kernel's program: the app's program for kernels made from a shadow, the
// kernel's own program otherwise (a linked program created from cached binaries).
const RecordedKernel* kernel_record(cl_kernel kernel, std::shared_ptr<const RecordedAnswers>& holder) {
  if (!served_programs().any.load(std::memory_order_relaxed)) return nullptr;
  cl_program program = program_of_kernel(kernel);
  if (!program && next().clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr) != CL_SUCCESS) {
    return nullptr;
  }
  std::shared_ptr<const LazyAnswers> lazy = lazy_answers_for(program, nullptr);
  holder = lazy ? lazy->get() : nullptr;
  if (!holder) return nullptr;
  std::string name;
  size_t size = 0;
  if (next().clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size) != CL_SUCCESS) return nullptr;
  name.resize(size);
  if (next().clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr) != CL_SUCCESS) return nullptr;
  while (!name.empty() && name.back() == '\0') name.pop_back();
  auto found = holder->kernels.find(holder->kernel_names_hashed ? obfuscated_name(name) : name);
  if (found != holder->kernels.end()) return &found->second;
  // The program has this kernel (the driver made it) and the record does not: incomplete.
  lazy->refuse("recorded answers lack kernel " + name.substr(0, 64));
  return nullptr;
}

}  // namespace

RecordedBuild record_build(cl_program program, const std::vector<cl_device_id>& devices,
                           const std::vector<std::string>& kernel_names) {
  RecordedBuild recorded;
  std::map<std::string, RecordedKernel> kernels = read_kernel_answers(program, kernel_names, &recorded.problem);
  for (cl_device_id device : devices) {
    recorded.logs.push_back(build_log(program, device));
    if (recorded.problem.empty()) recorded.answers.push_back(answers_json(recorded.logs.back(), kernels, &recorded.problem));
  }
  return recorded;
}

std::shared_ptr<const LazyAnswers> answers_of_hit(Engine& engine, const Lookup& lookup) {
  return std::make_shared<const LazyAnswers>(
      lookup.answers, [&engine, entry = lookup.served()](const std::string& problem) { engine.refuse_served(entry, problem); });
}

AnswersByDevice answers_of_hits(Engine& engine, const std::vector<Lookup>& lookups,
                                const std::vector<cl_device_id>& devices, std::string* problem) {
  AnswersByDevice answers;
  for (size_t d = 0; d < lookups.size() && d < devices.size(); ++d) {
    if (!lookups[d].answers) {
      parse_answers(nullptr, problem);  // its reason for an entry without a record
      return {};
    }
    answers[devices[d]] = answers_of_hit(engine, lookups[d]);
  }
  return answers;
}

void serve_recorded_answers(cl_program program, AnswersByDevice answers, bool via_shadow) {
  std::lock_guard lock(served_programs().mutex);
  served_programs().programs[program] = {std::move(answers), via_shadow};
  served_programs().any.store(true, std::memory_order_relaxed);
}

void drop_recorded_answers(cl_program program) {
  if (!served_programs().any.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(served_programs().mutex);
  served_programs().programs.erase(program);
}

bool answer_recorded_build_info(cl_program program, cl_device_id device, cl_program_build_info param, size_t size,
                                void* value, size_t* size_ret, cl_int& status) {
  if (param != CL_PROGRAM_BUILD_LOG) return false;
  std::shared_ptr<const RecordedAnswers> answers = answers_for(program, device);
  if (!answers) return false;
  status = give_answer({CL_SUCCESS, answers->build_log + '\0'}, size, value, size_ret);
  return true;
}

bool answer_recorded_kernel_info(cl_kernel kernel, cl_kernel_info param, size_t size, void* value, size_t* size_ret,
                                 cl_int& status) {
  if (param != CL_KERNEL_ATTRIBUTES) return false;
  std::shared_ptr<const RecordedAnswers> holder;
  const RecordedKernel* recorded = kernel_record(kernel, holder);
  if (!recorded) return false;
  status = give_answer(recorded->attributes, size, value, size_ret);
  return true;
}

bool answer_recorded_arg_info(cl_kernel kernel, cl_uint arg, cl_kernel_arg_info param, size_t size, void* value,
                              size_t* size_ret, cl_int& status) {
  size_t query = kArgQueries.size();
  for (size_t q = 0; q < kArgQueries.size(); ++q) query = kArgQueries[q] == param ? q : query;
  if (query == kArgQueries.size()) return false;  // an unknown query: the driver's error
  std::shared_ptr<const RecordedAnswers> holder;
  const RecordedKernel* recorded = kernel_record(kernel, holder);
  if (!recorded || arg >= recorded->args.size()) return false;  // past the last: the driver's CL_INVALID_ARG_INDEX
  status = give_answer(recorded->args[arg][query], size, value, size_ret);
  return true;
}

}  // namespace jitcache::opencl
