// How jitcache-run starts the app: a start that failed only because the new process died before
// it finished starting is tried again. Wine's CreateProcessW fails with ERROR_INTERNAL_ERROR when
// the child's Unix process ends before it reports its start (seen once in CI, on an idle machine,
// cause inside Wine not found). None of the app's code has run then, and a plain `wine app.exe`
// does not go through this call, so the launcher must not be what makes the app fail to start.
// Portable, so it is tested on Linux.
#pragma once

#include <functional>

namespace jitcache::windows {

// ERROR_INTERNAL_ERROR (winerror.h), the one failure tried again.
inline constexpr unsigned long kStartDiedEarly = 1359;
inline constexpr int kStartAttempts = 3;

// Calls `start` until it succeeds, at most kStartAttempts times while it fails with
// kStartDiedEarly; any other failure is final. `start` returns true on success, else false with
// the error in *error. Returns the last result; *error holds the last failure's code.
bool start_with_retries(const std::function<bool(unsigned long* error)>& start, unsigned long* error);

}  // namespace jitcache::windows
