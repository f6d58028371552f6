#include "shim/opencl/recorded_answers.hpp"

#include <cstring>
#include <limits>

#include "shim/opencl/next_functions.hpp"

namespace jitcache::opencl {
namespace {

// Caps, far above real programs (hashcat's biggest: ~100 kernels of ~30 arguments, short logs),
// far below what would hurt a process reading a hostile sidecar.
constexpr std::size_t kMaxAnswerBytes = 64u << 10;
constexpr std::size_t kMaxBuildLogBytes = 1u << 20;
constexpr std::size_t kMaxKernels = 4096;
constexpr std::size_t kMaxArgs = 1024;
constexpr std::size_t kMaxTotalBytes = 4u << 20;

// Counts recorded bytes against kMaxTotalBytes.
struct Budget {
  std::size_t used = 0;
  bool take(std::size_t bytes) {
    used += bytes;
    return used <= kMaxTotalBytes;
  }
};

template <typename Query>
RecordedAnswer ask(Query query) {
  RecordedAnswer answer;
  size_t size = 0;
  answer.status = query(0, nullptr, &size);
  if (answer.status != CL_SUCCESS) return answer;
  if (size > kMaxAnswerBytes) {
    answer.status = CL_OUT_OF_HOST_MEMORY;  // marks "too large to record": refused below
    return answer;
  }
  answer.bytes.resize(size);
  answer.status = query(size, answer.bytes.data(), nullptr);
  if (answer.status != CL_SUCCESS) answer.bytes.clear();
  return answer;
}

RecordedKernel read_kernel(cl_kernel kernel) {
  RecordedKernel recorded;
  recorded.attributes = ask([&](size_t size, void* value, size_t* size_ret) {
    return next().clGetKernelInfo(kernel, CL_KERNEL_ATTRIBUTES, size, value, size_ret);
  });
  cl_uint args = 0;
  if (next().clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr) != CL_SUCCESS) args = 0;
  recorded.args.resize(std::min<std::size_t>(args, kMaxArgs + 1));  // one more than the cap: refused below
  for (cl_uint arg = 0; arg < recorded.args.size(); ++arg) {
    for (std::size_t q = 0; q < kArgQueries.size(); ++q) {
      recorded.args[arg][q] = ask([&](size_t size, void* value, size_t* size_ret) {
        return next().clGetKernelArgInfo(kernel, arg, kArgQueries[q], size, value, size_ret);
      });
    }
  }
  return recorded;
}

bool fits(const RecordedAnswer& answer, Budget& budget) {
  return answer.status != CL_OUT_OF_HOST_MEMORY && answer.bytes.size() <= kMaxAnswerBytes &&
         budget.take(answer.bytes.size() + 16);
}

const char kHexDigits[] = "0123456789abcdef";

std::string hex(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHexDigits[c >> 4];
    out += kHexDigits[c & 15];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool unhex(const std::string& text, std::string* bytes) {
  if (text.size() % 2 != 0) return false;
  bytes->resize(text.size() / 2);
  for (std::size_t i = 0; i < bytes->size(); ++i) {
    int high = hex_digit(text[2 * i]), low = hex_digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    (*bytes)[i] = static_cast<char>(high * 16 + low);
  }
  return true;
}

nlohmann::json answer_json(const RecordedAnswer& answer) {
  return {{"status", answer.status}, {"bytes", hex(answer.bytes)}};
}

bool parse_answer(const nlohmann::json& json, RecordedAnswer* answer, Budget& budget) {
  if (!json.is_object()) return false;
  auto status = json.find("status");
  auto bytes = json.find("bytes");
  if (status == json.end() || !status->is_number_integer() || bytes == json.end() || !bytes->is_string()) return false;
  std::int64_t code = status->get<std::int64_t>();
  if (code < std::numeric_limits<cl_int>::min() || code > std::numeric_limits<cl_int>::max()) return false;
  const std::string& text = bytes->get_ref<const std::string&>();
  if (text.size() > 2 * kMaxAnswerBytes || !budget.take(text.size() / 2 + 16)) return false;
  answer->status = static_cast<cl_int>(code);
  return unhex(text, &answer->bytes) && (answer->status == CL_SUCCESS || answer->bytes.empty());
}

bool parse_kernel(const nlohmann::json& json, RecordedKernel* kernel, Budget& budget) {
  if (!json.is_object()) return false;
  auto attributes = json.find("attributes");
  auto args = json.find("args");
  if (attributes == json.end() || args == json.end() || !args->is_array() || args->size() > kMaxArgs) return false;
  if (!parse_answer(*attributes, &kernel->attributes, budget)) return false;
  kernel->args.resize(args->size());
  for (std::size_t a = 0; a < args->size(); ++a) {
    const nlohmann::json& arg = (*args)[a];
    if (!arg.is_array() || arg.size() != kArgQueries.size()) return false;
    for (std::size_t q = 0; q < kArgQueries.size(); ++q) {
      if (!parse_answer(arg[q], &kernel->args[a][q], budget)) return false;
    }
  }
  return true;
}

}  // namespace

std::map<std::string, RecordedKernel> read_kernel_answers(cl_program program, const std::vector<std::string>& names,
                                                          std::string* problem) {
  std::map<std::string, RecordedKernel> kernels;
  if (names.size() > kMaxKernels) {
    *problem = "more than " + std::to_string(kMaxKernels) + " kernels to record answers for";
    return {};
  }
  Budget budget;
  for (const std::string& name : names) {
    cl_int status = CL_SUCCESS;
    cl_kernel kernel = next().clCreateKernel(program, name.c_str(), &status);
    if (!kernel) {
      *problem = "clCreateKernel(" + name.substr(0, 64) + ") returned " + std::to_string(status) +
                 " while recording its answers";
      return {};
    }
    RecordedKernel recorded = read_kernel(kernel);
    next().clReleaseKernel(kernel);
    bool ok = name.size() <= kMaxAnswerBytes && budget.take(name.size()) && recorded.args.size() <= kMaxArgs &&
              fits(recorded.attributes, budget);
    for (const auto& arg : recorded.args) {
      for (const RecordedAnswer& answer : arg) ok = ok && fits(answer, budget);
    }
    if (!ok) {
      *problem = "the answers to record for kernel " + name.substr(0, 64) + " exceed the size caps";
      return {};
    }
    kernels[name] = std::move(recorded);
  }
  return kernels;
}

nlohmann::json answers_json(const std::string& build_log, const std::map<std::string, RecordedKernel>& kernels,
                            std::string* problem) {
  if (build_log.size() > kMaxBuildLogBytes) {
    *problem = "build log longer than " + std::to_string(kMaxBuildLogBytes) + " bytes";
    return nullptr;
  }
  nlohmann::json kernels_json = nlohmann::json::object();
  for (const auto& [name, kernel] : kernels) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& arg : kernel.args) {
      nlohmann::json queries = nlohmann::json::array();
      for (const RecordedAnswer& answer : arg) queries.push_back(answer_json(answer));
      args.push_back(std::move(queries));
    }
    kernels_json[name] = {{"attributes", answer_json(kernel.attributes)}, {"args", std::move(args)}};
  }
  return {{"version", kAnswersVersion}, {"build_log", build_log}, {"kernels", std::move(kernels_json)}};
}

std::shared_ptr<const RecordedAnswers> parse_answers(const nlohmann::json& sidecar, std::string* problem) {
  auto fail = [problem](std::string why) {
    *problem = "recorded answers " + std::move(why);
    return nullptr;
  };
  if (!sidecar.is_object()) return fail("missing");
  auto found = sidecar.find("answers");
  if (found == sidecar.end()) return fail("missing (an entry written before they were recorded)");
  const nlohmann::json& json = *found;
  if (!json.is_object()) return fail("are not an object");
  auto version = json.find("version");
  if (version == json.end() || !version->is_number_integer() || version->get<std::int64_t>() != kAnswersVersion) {
    return fail("are of another version");
  }
  auto log = json.find("build_log");
  auto kernels = json.find("kernels");
  auto hashed_kernels = json.find("hashed_kernels");
  if ((kernels == json.end()) == (hashed_kernels == json.end())) return fail("have no valid kernels");
  const bool hashed = kernels == json.end();
  if (hashed) kernels = hashed_kernels;
  if (log == json.end() || !log->is_string() || log->get_ref<const std::string&>().size() > kMaxBuildLogBytes) {
    return fail("have no valid build_log");
  }
  if (kernels == json.end() || !kernels->is_object() || kernels->size() > kMaxKernels) return fail("have no valid kernels");
  auto answers = std::make_shared<RecordedAnswers>();
  answers->build_log = log->get<std::string>();
  answers->kernel_names_hashed = hashed;
  Budget budget;
  for (const auto& [name, kernel] : kernels->items()) {
    if (name.size() > kMaxAnswerBytes || !budget.take(name.size())) return fail("exceed the size caps");
    if (!parse_kernel(kernel, &answers->kernels[name], budget)) return fail("for kernel " + name.substr(0, 64) + " are malformed");
  }
  return answers;
}

cl_int give_answer(const RecordedAnswer& answer, size_t size, void* value, size_t* size_ret) {
  if (answer.status != CL_SUCCESS) return answer.status;
  if (value) {
    if (size < answer.bytes.size()) return CL_INVALID_VALUE;
    std::memcpy(value, answer.bytes.data(), answer.bytes.size());
  }
  if (size_ret) *size_ret = answer.bytes.size();
  return CL_SUCCESS;
}

}  // namespace jitcache::opencl
