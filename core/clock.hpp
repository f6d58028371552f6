// Small time helpers shared by the engine, traces and sidecars.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace jitcache {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  std::uint64_t elapsed_us() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// "2026-11-22T19:49:01.123456Z"
std::string iso8601_now();

}  // namespace jitcache
