#include "shim/windows/start_retry.hpp"

namespace jitcache::windows {

bool start_with_retries(const std::function<bool(unsigned long* error)>& start, unsigned long* error) {
  for (int attempt = 1;; ++attempt) {
    *error = 0;
    if (start(error)) return true;
    if (*error != kStartDiedEarly || attempt == kStartAttempts) return false;
  }
}

}  // namespace jitcache::windows
