// A bound on calls that the kernel may never return from: a read on a hard-mounted NFS directory
// whose server is gone blocks in the kernel, where no timeout or signal reaches it. Such a call
// runs on a worker thread of its own while the caller waits at most until its deadline; past it,
// the caller gets `timeout` and goes on, and the worker stays with the hung call. Until that call
// returns, later calls answer `error` at once: one hung mount costs one wait, never one per call.
// The work must own everything it touches (copies, shared_ptr): the caller may be gone before it ends.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "store/remote_api/remote_client.hpp"

namespace jitcache {

class OffThreadCall {
 public:
  OffThreadCall();
  ~OffThreadCall();  // never waits for a hung call: the worker is left to finish it alone
  OffThreadCall(const OffThreadCall&) = delete;
  OffThreadCall& operator=(const OffThreadCall&) = delete;

  RemoteResult run(Deadline deadline, std::function<RemoteResult()> work);

 private:
  struct Worker;
  std::shared_ptr<Worker> worker_;  // shared with its thread; replaced in a forked child
};

}  // namespace jitcache
