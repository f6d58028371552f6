#include "shim/opencl/lazy_answers.hpp"

#include "core/log.hpp"

namespace jitcache::opencl {

LazyAnswers::LazyAnswers(std::shared_ptr<const std::string> text, OnRefused on_refused)
    : text_(std::move(text)), on_refused_(std::move(on_refused)) {}

std::shared_ptr<const RecordedAnswers> LazyAnswers::get() const {
  std::call_once(decoded_once_, [this] {
    std::string problem;
    try {
      decoded_ = parse_answers(text_.get(), &problem);
    } catch (const std::exception& e) {  // out of memory: refused like a malformed record
      decoded_ = nullptr;
      problem = std::string("recorded answers not decoded: ") + e.what();
    }
    if (!decoded_) refuse(problem);
  });
  return refused_.load() ? nullptr : decoded_;
}

void LazyAnswers::refuse(const std::string& problem) const {
  std::call_once(refused_once_, [&] {
    refused_ = true;
    const std::string why = problem + "; the driver answers the queries on the program served from it";
    try {
      if (on_refused_) on_refused_(why);
      else log_warning(why);
    } catch (const std::exception& e) {
      log_warning(why + "; the entry could not be dropped: " + e.what());
    }
  });
}

}  // namespace jitcache::opencl
