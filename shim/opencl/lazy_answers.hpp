// A hit's recorded answers (recorded_answers.hpp), decoded on the first query that needs them:
// most apps never ask CL_KERNEL_ATTRIBUTES, clGetKernelArgInfo or the build log of a served
// program, and the decode was a third of a pack hit (docs/decisions/store.md, "A hit decodes its
// recorded answers only when the app asks"). A record found malformed then cannot undo the hit:
// one warning, the entry is dropped from the cache (`on_refused`; the next build of the key
// rebuilds it), and every query on the program goes to the driver, which answers for the binary
// it loaded.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "shim/opencl/recorded_answers.hpp"

namespace jitcache::opencl {

class LazyAnswers {
 public:
  using OnRefused = std::function<void(const std::string& problem)>;
  LazyAnswers(std::shared_ptr<const std::string> text, OnRefused on_refused);

  // The checked record, decoded by the first call; null (then and ever after) when malformed
  // or refused.
  std::shared_ptr<const RecordedAnswers> get() const;
  // A well-formed record found incomplete by a query (it lacks a kernel of the program): refused
  // as a malformed one is, once; the driver answers from now on.
  void refuse(const std::string& problem) const;

 private:
  std::shared_ptr<const std::string> text_;
  OnRefused on_refused_;
  mutable std::once_flag decoded_once_;
  mutable std::shared_ptr<const RecordedAnswers> decoded_;
  mutable std::once_flag refused_once_;
  mutable std::atomic<bool> refused_{false};
};

}  // namespace jitcache::opencl
