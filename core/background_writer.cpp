#include "core/background_writer.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <new>
#include <thread>

#include "core/platform.hpp"

namespace jitcache {
namespace {

struct WriterState {
  std::mutex mutex;
  std::condition_variable wake;      // a job arrived
  std::condition_variable finished;  // a job completed
  std::deque<BackgroundWriter::Job> queue;
  bool running = false;  // the worker thread exists in this process
  bool busy = false;
};

// Never destroyed: the worker may still run while static destructors do at exit.
alignas(WriterState) unsigned char g_storage[sizeof(WriterState)];
WriterState* g_state = new (g_storage) WriterState;

void work_loop() {
  std::unique_lock lock(g_state->mutex);
  for (;;) {
    g_state->wake.wait(lock, [] { return !g_state->queue.empty(); });
    BackgroundWriter::Job job = std::move(g_state->queue.front());
    g_state->queue.pop_front();
    g_state->busy = true;
    lock.unlock();
    job();  // jobs catch their own errors
    lock.lock();
    g_state->busy = false;
    g_state->finished.notify_all();
  }
}

// The child of a fork has no worker thread and a copy of the parent's queue, whose jobs the
// parent will run: start over with fresh state.
void reset_in_child() { g_state = new (g_storage) WriterState; }

void lock_for_fork() { g_state->mutex.lock(); }
void unlock_after_fork() { g_state->mutex.unlock(); }

}  // namespace

BackgroundWriter& BackgroundWriter::instance() {
  static BackgroundWriter writer;
  static std::once_flag fork_handlers;
  std::call_once(fork_handlers, [] { platform::at_fork(lock_for_fork, unlock_after_fork, reset_in_child); });
  return writer;
}

void BackgroundWriter::post(Job job) {
  if (!platform::worker_threads_outlive_exit()) return job();
  std::unique_lock lock(g_state->mutex);
  if (!g_state->running) {
    try {
      std::thread(work_loop).detach();
      g_state->running = true;
    } catch (...) {
      lock.unlock();
      job();  // no thread to be had: run it here rather than lose it
      return;
    }
  }
  g_state->queue.push_back(std::move(job));
  g_state->wake.notify_one();
}

bool BackgroundWriter::drain(std::chrono::milliseconds timeout) {
  std::unique_lock lock(g_state->mutex);
  return g_state->finished.wait_for(lock, timeout, [] { return g_state->queue.empty() && !g_state->busy; });
}

}  // namespace jitcache
