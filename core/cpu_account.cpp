#include "core/cpu_account.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "core/platform.hpp"

namespace jitcache::cpu_account {
namespace {

struct Account {
  std::mutex mutex;
  const char* running = nullptr;
  std::chrono::microseconds since{0};  // the process's CPU clock at the last switch
  Steps own;
  Steps other;

  // The CPU since the last switch, to the step that ran. Under `mutex`.
  void charge() {
    const std::chrono::microseconds now = platform::own_cpu_time();
    own[running] += now > since ? static_cast<std::uint64_t>((now - since).count()) : 0;  // a step that ran is named
    since = std::max(since, now);
  }
};

std::atomic<bool> kept{false};

Account& account() {
  static Account* a = new Account;  // never destroyed: background threads may switch at exit
  return *a;
}

}  // namespace

void start(const char* step) {
  Account& a = account();
  std::lock_guard lock(a.mutex);
  a.running = step;
  a.since = std::chrono::microseconds(0);  // a process's clock starts with the process (a worker: its fork)
  a.charge();
  kept.store(true, std::memory_order_release);
}

const char* switch_to(const char* step) {
  if (!kept.load(std::memory_order_acquire)) return nullptr;
  Account& a = account();
  std::lock_guard lock(a.mutex);
  a.charge();
  const char* before = a.running;
  a.running = step;
  return before;
}

void add_other(const char* step, std::uint64_t us) {
  if (!kept.load(std::memory_order_acquire)) return;
  Account& a = account();
  std::lock_guard lock(a.mutex);
  a.other[step] += us;
}

Taken take() {
  if (!kept.load(std::memory_order_acquire)) return {};
  Account& a = account();
  std::lock_guard lock(a.mutex);
  a.charge();
  Taken taken{std::move(a.own), std::move(a.other)};
  a.own.clear();
  a.other.clear();
  return taken;
}

}  // namespace jitcache::cpu_account
