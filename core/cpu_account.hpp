// What a capture helper's worker spends its CPU on, by step, per key (docs/trace-format.md,
// "helper_cpu"). One account per process, kept only where start() was called (a helper's worker,
// capture/helper_process.cpp); everywhere else, every app included, each call is one atomic load.
//
// The steps partition the process's CPU clock: at every switch, the CPU the whole process used
// since the one before goes to the step that ran. So the steps add up to what the OS charged the
// process, whichever of its threads ran; a thread that works beside the one that switches (a
// background store) is charged to the step that runs meanwhile.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace jitcache::cpu_account {

using Steps = std::map<std::string, std::uint64_t>;  // step -> microseconds of CPU

// This process keeps an account from now on; its CPU so far goes to `step`.
void start(const char* step);

// From now on the process's CPU goes to `step` (a string literal). Returns the step that ran
// before, null when no account is kept.
const char* switch_to(const char* step);

// CPU another process spent for the key under way (the helper's own, sent with the job): reported
// with the next take(), apart from this process's.
void add_other(const char* step, std::uint64_t us);

struct Taken {
  Steps own;    // this process's, charged up to now
  Steps other;  // add_other()'s
};
// What was spent since the last take (nothing when no account is kept); the account then starts
// from zero, the step running goes on.
Taken take();

// A step for the scope's length; the step before runs again after it.
class Step {
 public:
  explicit Step(const char* step) : previous_(switch_to(step)) {}
  ~Step() {
    if (previous_) switch_to(previous_);
  }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

 private:
  const char* previous_;
};

}  // namespace jitcache::cpu_account
