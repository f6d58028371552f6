// A progress line for long commands: "\r  <what> <done>/<total>" on stderr, only when stderr is a
// terminal (piped or redirected: nothing extra), at most ten times a second, cleared at the end.
// Callable as a DiskStore::StoreProgress (a label per phase) or with a fixed label.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace jitcache::tool {

class Progress {
 public:
  explicit Progress(std::string what = "") : what_(std::move(what)), tty_(::isatty(2) == 1) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void operator()(std::uint64_t done, std::uint64_t total) { show(what_, done, total); }
  void operator()(const char* what, std::uint64_t done, std::uint64_t total) { show(what, done, total); }
  // Takes the line away before output to the same terminal; a later call draws it again.
  void clear() {
    if (tty_ && shown_) std::fputs("\r\033[K", stderr);
    shown_ = false;
  }

 private:
  void show(const std::string& what, std::uint64_t done, std::uint64_t total) {
    if (!tty_) return;
    const auto now = std::chrono::steady_clock::now();
    if (what == last_what_ && done != total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    last_what_ = what;
    std::fprintf(stderr, "\r\033[K  %s %llu/%llu", what.c_str(), static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total));
    std::fflush(stderr);
    shown_ = true;
  }

  std::string what_;
  bool tty_;
  bool shown_ = false;
  std::string last_what_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace jitcache::tool
