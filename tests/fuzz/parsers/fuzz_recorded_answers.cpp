// The OpenCL adapter's decoder of a hit's recorded answers (RapidJSON, no nlohmann tree): whatever
// the text, it never crashes, and what it accepts is written back by answers_json and decoded
// again to the same record.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "shim/opencl/recorded_answers.hpp"

namespace {

bool same(const jitcache::opencl::RecordedAnswer& a, const jitcache::opencl::RecordedAnswer& b) {
  return a.status == b.status && a.bytes == b.bytes;
}

bool same(const jitcache::opencl::RecordedAnswers& a, const jitcache::opencl::RecordedAnswers& b) {
  if (a.build_log != b.build_log || a.kernels.size() != b.kernels.size()) return false;
  for (const auto& [name, kernel] : a.kernels) {
    auto other = b.kernels.find(name);
    if (other == b.kernels.end() || !same(kernel.attributes, other->second.attributes) ||
        kernel.args.size() != other->second.args.size()) {
      return false;
    }
    for (std::size_t arg = 0; arg < kernel.args.size(); ++arg) {
      for (std::size_t q = 0; q < kernel.args[arg].size(); ++q) {
        if (!same(kernel.args[arg][q], other->second.args[arg][q])) return false;
      }
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  const std::string text(jitcache::fuzz::as_text(data, size));
  std::string problem;
  std::shared_ptr<const opencl::RecordedAnswers> decoded = opencl::parse_answers(&text, &problem);
  if (!decoded) {
    if (problem.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const std::string again =
      opencl::answers_json(decoded->build_log, decoded->kernels, &problem)
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  std::shared_ptr<const opencl::RecordedAnswers> redecoded = opencl::parse_answers(&again, &problem);
  if (!redecoded || !same(*decoded, *redecoded)) std::abort();
  return 0;
}
