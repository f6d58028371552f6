// Runs stores and trace writes off the app's critical path, on one lazily started thread.
// At exit the queue is drained with a bounded wait; a forked child starts with an empty queue.
#pragma once

#include <chrono>
#include <functional>

namespace jitcache {

class BackgroundWriter {
 public:
  using Job = std::function<void()>;

  static BackgroundWriter& instance();

  void post(Job job);
  // Waits until every job posted so far has run, or `timeout` passed. True when drained.
  bool drain(std::chrono::milliseconds timeout);

 private:
  BackgroundWriter() = default;
};

}  // namespace jitcache
