#include "core/long_wait.hpp"

#include <algorithm>
#include <array>
#include <atomic>

#include "core/log.hpp"

namespace jitcache {
namespace {

std::array<std::atomic<bool>, static_cast<std::size_t>(WaitKind::count_)> g_announced{};

std::string describe(std::chrono::milliseconds bound) {
  if (bound.count() % 1000 == 0) return std::to_string(bound.count() / 1000) + " s";
  return std::to_string(bound.count()) + " ms";
}

}  // namespace

void announce_wait(const WaitNotice& notice, std::chrono::milliseconds bound) {
  if (g_announced[static_cast<std::size_t>(notice.kind)].exchange(true)) return;
  log_announce("waiting up to " + describe(bound) + " for " + notice.what + " (bounded by " + notice.setting + ")");
}

bool wait_announced(const WaitNotice& notice, std::chrono::milliseconds bound,
                    const std::function<bool(std::chrono::milliseconds)>& attempt) {
  const auto started = std::chrono::steady_clock::now();
  if (attempt(std::min(bound, kQuietWait))) return true;
  auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (spent >= bound) return false;
  announce_wait(notice, bound);
  return attempt(bound - spent);
}

}  // namespace jitcache
