#include "store/remote/off_thread_call.hpp"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "store/files/file_ops.hpp"

namespace jitcache {

struct OffThreadCall::Worker {
  std::mutex mutex;
  std::condition_variable changed;
  std::function<RemoteResult()> job;  // set: waiting for the thread
  std::optional<RemoteResult> done;  // the job's result, for the caller still waiting
  bool busy = false;  // a job is queued or running (a hung one included)
  bool quit = false;
  std::uint64_t generation = 0;  // which call `done` answers
  std::uint64_t owner = 0;  // the process whose thread serves this worker

  static void serve(const std::shared_ptr<Worker>& self) {
    std::unique_lock lock(self->mutex);
    for (;;) {
      self->changed.wait(lock, [&] { return self->quit || self->job; });
      if (self->quit) return;
      std::function<RemoteResult()> job = std::move(self->job);
      self->job = nullptr;
      const std::uint64_t generation = self->generation;
      lock.unlock();
      RemoteResult result = job();
      lock.lock();
      if (generation == self->generation) self->done = std::move(result);
      self->busy = false;
      self->changed.notify_all();
    }
  }
};

OffThreadCall::OffThreadCall() = default;

OffThreadCall::~OffThreadCall() {
  if (!worker_ || worker_->owner != fileops::current_process_id()) return;  // a forked child's copy: untouched
  std::lock_guard lock(worker_->mutex);
  worker_->quit = true;
  worker_->changed.notify_all();
}

RemoteResult OffThreadCall::run(Deadline deadline, std::function<RemoteResult()> work) {
  const std::uint64_t process = fileops::current_process_id();
  // First call, or the first in a forked child (the parent's thread does not exist here).
  if (!worker_ || worker_->owner != process) {
    auto fresh = std::make_shared<Worker>();
    fresh->owner = process;
    try {
      std::thread(Worker::serve, fresh).detach();
    } catch (const std::system_error& error) {
      return remote_result(RemoteStatus::error, std::string("cannot start a thread: ") + error.what());
    }
    worker_ = std::move(fresh);  // a forked child's copy of the parent's state is left as is
  }
  Worker& worker = *worker_;
  std::unique_lock lock(worker.mutex);
  if (worker.busy) return remote_result(RemoteStatus::error, "an earlier call has not returned yet (a hung mount?)");
  worker.busy = true;
  worker.done.reset();
  worker.job = std::move(work);
  const std::uint64_t generation = ++worker.generation;
  worker.changed.notify_all();
  if (!worker.changed.wait_until(lock, deadline, [&] { return !worker.busy; })) {
    // busy stays set until the hung call returns; its result is dropped
    return remote_result(RemoteStatus::timeout, "no answer from the file system in time (a hung mount?)");
  }
  if (generation != worker.generation || !worker.done)
    return remote_result(RemoteStatus::error, "lost the call's result");
  RemoteResult result = std::move(*worker.done);
  worker.done.reset();
  return result;
}

}  // namespace jitcache
