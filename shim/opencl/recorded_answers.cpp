#include "shim/opencl/recorded_answers.hpp"

#include <cstring>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

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
// The text a hit decodes: the caps above hex-encoded, with room for JSON's syntax and escapes.
constexpr std::size_t kMaxTextBytes = 16u << 20;

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

nlohmann::json answer_json(const RecordedAnswer& answer) {
  return {{"status", answer.status}, {"bytes", hex(answer.bytes)}};
}

using JsonValue = rapidjson::Value;

std::string_view text_of(const JsonValue& string) { return {string.GetString(), string.GetStringLength()}; }

// RapidJSON decodes a lone low-surrogate escape ("\udc00") to bytes that are not UTF-8 (ED B0 80);
// nlohmann, the sidecar's other reader, refuses it, and so does this decoder.
bool encodes_a_surrogate(std::string_view text) {
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) == 0xED && static_cast<unsigned char>(text[i + 1]) >= 0xA0) return true;
  }
  return false;
}

// The members of `object` named in `names` (null: absent); false when a name appears twice (a
// parser's rule would then decide which counts).
template <std::size_t N>
bool members_of(const JsonValue& object, const std::array<std::string_view, N>& names,
                std::array<const JsonValue*, N>* found) {
  found->fill(nullptr);
  for (auto member = object.MemberBegin(); member != object.MemberEnd(); ++member) {
    const std::string_view name = text_of(member->name);
    for (std::size_t i = 0; i < N; ++i) {
      if (name != names[i]) continue;
      if ((*found)[i]) return false;
      (*found)[i] = &member->value;
    }
  }
  return true;
}

bool unhex(std::string_view text, std::string* bytes) {
  if (text.size() % 2 != 0) return false;
  bytes->resize(text.size() / 2);
  for (std::size_t i = 0; i < bytes->size(); ++i) {
    int high = hex_digit(text[2 * i]), low = hex_digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    (*bytes)[i] = static_cast<char>(high * 16 + low);
  }
  return true;
}

bool decode_answer(const JsonValue& json, RecordedAnswer* answer, Budget& budget) {
  std::array<const JsonValue*, 2> found;
  if (!json.IsObject() || !members_of<2>(json, {"status", "bytes"}, &found)) return false;
  const auto [status, bytes] = found;
  // IsInt: an integer that fits cl_int (a fraction or a larger number is not).
  if (!status || !status->IsInt() || !bytes || !bytes->IsString()) return false;
  const std::string_view text = text_of(*bytes);
  if (text.size() > 2 * kMaxAnswerBytes || !budget.take(text.size() / 2 + 16)) return false;
  answer->status = static_cast<cl_int>(status->GetInt());
  return unhex(text, &answer->bytes) && (answer->status == CL_SUCCESS || answer->bytes.empty());
}

bool decode_kernel(const JsonValue& json, RecordedKernel* kernel, Budget& budget) {
  std::array<const JsonValue*, 2> found;
  if (!json.IsObject() || !members_of<2>(json, {"attributes", "args"}, &found)) return false;
  const auto [attributes, args] = found;
  if (!attributes || !args || !args->IsArray() || args->Size() > kMaxArgs) return false;
  if (!decode_answer(*attributes, &kernel->attributes, budget)) return false;
  kernel->args.resize(args->Size());
  for (rapidjson::SizeType a = 0; a < args->Size(); ++a) {
    const JsonValue& arg = (*args)[a];
    if (!arg.IsArray() || arg.Size() != kArgQueries.size()) return false;
    for (rapidjson::SizeType q = 0; q < kArgQueries.size(); ++q) {
      if (!decode_answer(arg[q], &kernel->args[a][q], budget)) return false;
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

std::shared_ptr<const RecordedAnswers> parse_answers(const std::string* text, std::string* problem) {
  auto fail = [problem](std::string why) {
    *problem = "recorded answers " + std::move(why);
    return nullptr;
  };
  if (!text) return fail("missing (an entry written before they were recorded)");
  if (text->size() > kMaxTextBytes) return fail("exceed the size caps");
  // Iterative: no recursion however deep a hostile text nests; invalid UTF-8 is refused as the
  // sidecar's other parser (nlohmann) refuses it.
  rapidjson::Document json;
  json.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(text->data(), text->size());
  if (json.HasParseError()) {
    return fail(std::string("are not valid JSON (") + rapidjson::GetParseError_En(json.GetParseError()) + ")");
  }
  if (!json.IsObject()) return fail("are not an object");
  std::array<const JsonValue*, 4> found;
  if (!members_of<4>(json, {"version", "build_log", "kernels", "hashed_kernels"}, &found)) {
    return fail("name a field twice");
  }
  auto [version, log, kernels, hashed_kernels] = found;
  if (!version || !version->IsInt() || version->GetInt() != kAnswersVersion) return fail("are of another version");
  if (!kernels == !hashed_kernels) return fail("have no valid kernels");
  const bool hashed = !kernels;
  if (hashed) kernels = hashed_kernels;
  if (!log || !log->IsString() || log->GetStringLength() > kMaxBuildLogBytes || encodes_a_surrogate(text_of(*log))) {
    return fail("have no valid build_log");
  }
  if (!kernels->IsObject() || kernels->MemberCount() > kMaxKernels) return fail("have no valid kernels");
  auto answers = std::make_shared<RecordedAnswers>();
  answers->build_log = text_of(*log);
  answers->kernel_names_hashed = hashed;
  Budget budget;
  for (auto kernel = kernels->MemberBegin(); kernel != kernels->MemberEnd(); ++kernel) {
    const std::string name(text_of(kernel->name));
    if (name.size() > kMaxAnswerBytes || !budget.take(name.size())) return fail("exceed the size caps");
    if (encodes_a_surrogate(name)) return fail("name a kernel that is not UTF-8");
    if (!answers->kernels.emplace(name, RecordedKernel{}).second) return fail("name kernel " + name.substr(0, 64) + " twice");
    if (!decode_kernel(kernel->value, &answers->kernels[name], budget)) {
      return fail("for kernel " + name.substr(0, 64) + " are malformed");
    }
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
