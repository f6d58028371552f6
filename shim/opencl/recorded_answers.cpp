#include "shim/opencl/recorded_answers.hpp"

#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

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

// RapidJSON decodes a lone low-surrogate escape ("\udc00") to bytes that are not UTF-8 (ED B0 80);
// nlohmann, the sidecar's other reader, refuses it, and so does this decoder.
bool encodes_a_surrogate(std::string_view text) {
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) == 0xED && static_cast<unsigned char>(text[i + 1]) >= 0xA0) return true;
  }
  return false;
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

// Decodes the record as RapidJSON's reader walks the text (SAX: no tree is built, a hit's largest
// step otherwise). It follows the record's shape: the object, "kernels" (or "hashed_kernels"), a
// kernel, its "args", one argument, one answer; a field of another name is skipped whatever it
// holds. It reads to the end of the text even after a fault, and refuses with the reason the
// checks give in this order: not JSON, not an object, a field twice, version, which kernels,
// build_log, the kernels' object, then the first faulty kernel (the first fault of the text's kernels).
class AnswersReader : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, AnswersReader> {
 public:
  explicit AnswersReader(RecordedAnswers* answers) : answers_(answers) {}

  // Null, Bool, Int64, Uint64, Double: no field of the record takes them.
  bool Default() { return scalar(std::nullopt); }
  bool Int(int number) { return scalar(number); }
  bool Uint(unsigned number) {
    if (number > static_cast<unsigned>(std::numeric_limits<int>::max())) return Default();  // not a cl_int
    return scalar(static_cast<int>(number));
  }
  bool String(const char* text, rapidjson::SizeType size, bool) { return string({text, size}); }
  bool StartObject() { return open(true); }
  bool StartArray() { return open(false); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }
  bool Key(const char* text, rapidjson::SizeType size, bool) { return key({text, size}); }

  // Null when the record is good; else why not (after "recorded answers ").
  std::optional<std::string> refusal() const {
    if (!object_) return "are not an object";
    if (field_twice_) return "name a field twice";
    if (!version_ok_) return "are of another version";
    if (seen_[kernels_field] == seen_[hashed_kernels_field]) return "have no valid kernels";
    if (!log_ok_) return "have no valid build_log";
    if (kernels_not_an_object_ || kernels_ > kMaxKernels) return "have no valid kernels";
    if (!kernel_problem_.empty()) return kernel_problem_;
    return std::nullopt;
  }
  bool names_hashed() const { return seen_[hashed_kernels_field]; }

 private:
  // Where the reader is: the containers of the record's shape now open, outermost first.
  enum class In : unsigned char { record, kernels, kernel, args, arg, answer };
  // What the next value is (set by the field's name, or by the array it is in).
  enum class Expect : unsigned char {
    record, skip, version, build_log, kernels, kernel, answer, args, arg, status, bytes, sixth_answer
  };
  enum TopField { version_field, build_log_field, kernels_field, hashed_kernels_field, top_fields };
  static constexpr std::size_t kKernelsDepth = 2;  // the record, then its kernels

  // A value other than a string, object or array: `integer` when it is one that fits a cl_int.
  bool scalar(std::optional<int> integer) {
    if (skipping_) return true;
    const Expect expect = next_expected();
    if (expect == Expect::version && integer) version_ok_ = *integer == kAnswersVersion;
    else if (expect == Expect::status && integer) answer_->status = static_cast<cl_int>(*integer);
    else wrong_value(expect);
    return true;
  }

  bool string(std::string_view text) {
    if (skipping_) return true;
    const Expect expect = next_expected();
    if (expect == Expect::build_log) {
      log_ok_ = text.size() <= kMaxBuildLogBytes && !encodes_a_surrogate(text);
      if (log_ok_) answers_->build_log = text;
    } else if (expect == Expect::bytes) {
      if (text.size() > 2 * kMaxAnswerBytes || !budget_.take(text.size() / 2 + 16) || !unhex(text, &answer_->bytes)) {
        fail_kernel();
      }
    } else {
      wrong_value(expect);
    }
    return true;
  }

  bool open(bool object) {
    if (skipping_) {
      ++skipping_;
      return true;
    }
    const Expect expect = next_expected();
    In opened;
    if (object && expect == Expect::record) {
      opened = In::record;
    } else if (object && expect == Expect::kernels) {
      opened = In::kernels;
    } else if (object && expect == Expect::kernel) {
      opened = In::kernel;
      attributes_seen_ = args_seen_ = false;
    } else if (object && expect == Expect::answer) {
      opened = In::answer;
      status_seen_ = bytes_seen_ = false;
    } else if (!object && expect == Expect::args) {
      opened = In::args;
    } else if (!object && expect == Expect::arg && kernel_->args.size() < kMaxArgs) {
      opened = In::arg;
      kernel_->args.emplace_back();
      queries_ = 0;
    } else {
      wrong_value(expect);
      ++skipping_;
      return true;
    }
    if (depth_ == open_.size()) return false;  // cannot happen: the shape is six deep
    open_[depth_++] = opened;
    expect_ = Expect::skip;
    return true;
  }

  bool close() {
    if (skipping_) {
      --skipping_;
      return true;
    }
    const In closed = open_[--depth_];
    if (closed == In::answer && (!status_seen_ || !bytes_seen_ || (answer_->status != CL_SUCCESS && !answer_->bytes.empty()))) {
      fail_kernel();
    } else if (closed == In::arg && queries_ != kArgQueries.size()) {
      fail_kernel();
    } else if (closed == In::kernel && (!attributes_seen_ || !args_seen_)) {
      fail_kernel();
    }
    return true;
  }

  bool key(std::string_view name) {
    if (skipping_) return true;
    expect_ = Expect::skip;  // a field of another name
    switch (open_[depth_ - 1]) {
      case In::record:
        for (std::size_t field = 0; field < top_fields; ++field) {
          if (name != kTopFields[field]) continue;
          if (seen_[field]) {
            field_twice_ = true;
          } else {
            seen_[field] = true;
            expect_ = kTopExpects[field];
          }
        }
        break;
      case In::kernels:
        if (++kernels_ <= kMaxKernels && kernel_problem_.empty()) start_kernel(name);
        break;
      case In::kernel:
        if (name == "attributes") {
          answer_ = &kernel_->attributes;
          expect_field(&attributes_seen_, Expect::answer);
        } else if (name == "args") {
          expect_field(&args_seen_, Expect::args);
        }
        break;
      case In::answer:
        if (name == "status") expect_field(&status_seen_, Expect::status);
        else if (name == "bytes") expect_field(&bytes_seen_, Expect::bytes);
        break;
      default:
        break;
    }
    return true;
  }

  void start_kernel(std::string_view name) {
    kernel_name_ = name;
    if (name.size() > kMaxAnswerBytes || !budget_.take(name.size())) {
      kernel_problem_ = "exceed the size caps";
    } else if (encodes_a_surrogate(name)) {
      kernel_problem_ = "name a kernel that is not UTF-8";
    } else {
      auto [kernel, added] = answers_->kernels.try_emplace(kernel_name_);
      if (!added) kernel_problem_ = "name kernel " + kernel_name_.substr(0, 64) + " twice";
      kernel_ = &kernel->second;
      if (added) expect_ = Expect::kernel;
    }
  }

  // A field of a kernel or an answer: a second one of a name is a fault.
  void expect_field(bool* seen, Expect expect) {
    if (*seen) return fail_kernel();
    *seen = true;
    expect_ = expect;
  }

  // The next value's expectation; in an argument list, an argument; in an argument, its next answer.
  Expect next_expected() {
    if (depth_ == 0) return Expect::record;
    switch (open_[depth_ - 1]) {
      case In::args:
        return Expect::arg;
      case In::arg:
        if (queries_ == kArgQueries.size()) return Expect::sixth_answer;
        answer_ = &kernel_->args.back()[queries_++];
        return Expect::answer;
      default:
        return expect_;
    }
  }

  // A value where the record has another (or none: skipped).
  void wrong_value(Expect expect) {
    switch (expect) {
      case Expect::record:
        object_ = false;
        break;
      case Expect::version:
        version_ok_ = false;
        break;
      case Expect::build_log:
        log_ok_ = false;
        break;
      case Expect::kernels:
        kernels_not_an_object_ = true;
        break;
      case Expect::skip:
        break;
      default:  // inside a kernel
        fail_kernel();
    }
  }

  // The kernel now read is faulty: the first such is the reason; the rest of it is skipped.
  void fail_kernel() {
    if (kernel_problem_.empty()) kernel_problem_ = "for kernel " + kernel_name_.substr(0, 64) + " are malformed";
    skipping_ += depth_ - kKernelsDepth;
    depth_ = kKernelsDepth;
    expect_ = Expect::skip;
  }

  static constexpr std::array<std::string_view, top_fields> kTopFields = {"version", "build_log", "kernels",
                                                                          "hashed_kernels"};
  static constexpr std::array<Expect, top_fields> kTopExpects = {Expect::version, Expect::build_log, Expect::kernels,
                                                                 Expect::kernels};

  RecordedAnswers* answers_;
  Budget budget_;
  std::array<In, 8> open_{};
  std::size_t depth_ = 0;
  std::size_t skipping_ = 0;  // containers open inside a value that is skipped
  Expect expect_ = Expect::record;
  // The record's faults.
  bool object_ = true, field_twice_ = false, version_ok_ = false, log_ok_ = false, kernels_not_an_object_ = false;
  std::array<bool, top_fields> seen_{};
  std::size_t kernels_ = 0;
  std::string kernel_problem_;
  // The kernel, argument and answer now read.
  std::string kernel_name_;
  RecordedKernel* kernel_ = nullptr;
  bool attributes_seen_ = false, args_seen_ = false;
  std::size_t queries_ = 0;
  RecordedAnswer* answer_ = nullptr;
  bool status_seen_ = false, bytes_seen_ = false;  // the fields' names: their values are checked as read
};

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
  auto answers = std::make_shared<RecordedAnswers>();
  AnswersReader decoder(answers.get());
  rapidjson::MemoryStream stream(text->data(), text->size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> input(stream);
  // Iterative: no recursion however deep a hostile text nests; invalid UTF-8 is refused as the
  // sidecar's other parser (nlohmann) refuses it.
  rapidjson::Reader reader;
  reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(input, decoder);
  if (reader.HasParseError()) {
    return fail(std::string("are not valid JSON (") + rapidjson::GetParseError_En(reader.GetParseErrorCode()) + ")");
  }
  if (std::optional<std::string> refusal = decoder.refusal()) return fail(std::move(*refusal));
  answers->kernel_names_hashed = decoder.names_hashed();
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
