// The one seam between the engine and the capture helper (capture/; docs/decisions/capture.md, "The
// capture helper's home"): the engine hands a build over, asks how long to wait for a key a helper
// is building, and tells the helper when the process ends or forks. How a helper starts, paces
// itself and builds is capture/'s alone. The program links an implementation in at its start (the
// shim when it loads, the `jitcache` tool in main); without one, nothing is handed over and a key
// whose capture is in flight is waited for as any other builder is.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <system_error>

#include "core/settings.hpp"
#include "hashing/digest.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {

// A missed build handed to the capture helper.
struct CaptureJob {
  std::string inputs;         // the recorded inputs' digest
  std::string record;         // and their bytes (hashing/recorded_inputs.hpp), sent as a file
  std::string device_digest;  // the key's device component digest
  Digest128 key;              // the app's key: the helper stores nothing under any other
  KeyLock mark;               // the key's capture marker, handed over
  KeyLock lock;               // the key's build lock when still held: handed over too
};

// A lookup's wait for a key whose capture is in flight (CaptureSeam::wait_for_key).
class CaptureWait {
 public:
  virtual ~CaptureWait() = default;
  // How long the lookup may wait; 0: it builds at once, for the reason built_here() gives.
  virtual std::chrono::milliseconds bound() const = 0;
  virtual std::string built_here() const = 0;
  // One attempt at the key's build lock of at most `step` (the store's answer); `*no_use` is set
  // once waiting on can no longer pay.
  virtual std::error_code lock(std::chrono::milliseconds step, KeyLock* lock, bool* no_use) = 0;
  // The wait took `waited_us` (whatever its end): counted against this process's waits for helpers.
  virtual void waited(std::uint64_t waited_us) = 0;
  // The wait ended without the lock (busy all the time it could wait): the lookup's reason for
  // building here. Says so in the log.
  virtual std::string gave_up(std::uint64_t waited_us) = 0;
};

class CaptureSeam {
 public:
  virtual ~CaptureSeam() = default;
  // Whether a capture helper can run here at all (there is a `jitcache` binary to run).
  virtual bool can_hand_over() = 0;
  // Hands `job` over: its helper's pid, 0 when it is kept until the exit, or -1 with `why` (the
  // job's marker and lock are released then).
  virtual long hand_over(CaptureJob job, const Settings& settings, std::string* why) = 0;
  // A build that will likely be handed over starts on the device whose key component digest is
  // `device_digest`: the helper may get ready meanwhile.
  virtual void expect(const std::string& device_digest, const Settings& settings) = 0;
  // How long to wait for `key`, whose capture is in flight, and the wait.
  // `may_wait_for_captures`: false where the driver rebuilds cheaply (LookupContext).
  virtual std::unique_ptr<CaptureWait> wait_for_key(DiskStore& store, const Digest128& key, const Settings& settings,
                                                    bool may_wait_for_captures) = 0;
  // The engine's flush of `store`, once its hand-overs are drained; `at_exit`: the process ends.
  virtual void flushed(bool at_exit, DiskStore& store) = 0;
  // In the child of fork(): the parent's helper is not the child's.
  virtual void after_fork() = 0;
};

// Links the capture helper in (once, at the program's start); linked_capture() returns it.
void link_capture(CaptureSeam& seam);
CaptureSeam* linked_capture();

}  // namespace jitcache
