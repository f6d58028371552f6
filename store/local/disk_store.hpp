// The persistent store: one file per key (header, JSON sidecar, binary), sharded by key prefix.
//
//   <root>/<k0k1>/<k2k3>/<key>.entry one rename commits it (store/local/entry_file.hpp); format 1's
//                                    <key>.bin + <key>.json pairs are still served
//   <root>/quarantine/               entries that failed verification, kept for inspection
//   <root>/tmp/                      temp files (swept when stale)
//   <root>/size                      exact byte + entry count, updated under <root>/size.lock
//
// Every failure is reported, never thrown: the caller degrades to "uncached".
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/local/store_types.hpp"

namespace jitcache {

namespace fileops {
class Dir;
}

// A held per-key build lock (see DiskStore::lock_key). Move-only; releasing removes the lock file.
class KeyLock {
 public:
  KeyLock();
  ~KeyLock();
  KeyLock(KeyLock&&) noexcept;
  KeyLock& operator=(KeyLock&&) noexcept;
  bool held() const;
  void release();
  // Handing the lock to another process (capture helpers, capture/hand_over.hpp): the
  // descriptor a child inherits (it then holds the lock too, the moment it exists), and letting
  // go of this process's copy without removing the lock file, which the new holder now owns.
  std::intptr_t native_handle() const;
  void let_go();

 private:
  friend class DiskStore;
  struct State;
  std::unique_ptr<State> state_;
};

class DiskStore {
 public:
  // Creates the root 0700 if missing. Refuses (nullptr + error) a root that is not a directory,
  // is owned by another user, or is writable by group/others. `checked_root`: the root already
  // opened by open_trusted_root (store/files/root_check.hpp; taken over), so that it is not checked
  // twice; null or closed to open and check it here.
  static std::unique_ptr<DiskStore> open(const std::filesystem::path& root, const StoreLimits& limits,
                                         std::string* error, fileops::Dir* checked_root = nullptr);

  const std::filesystem::path& root() const;
  const StoreLimits& limits() const;

  // Verifies the entry (header, sidecar, the binary's XXH3-64). On success touches the entry
  // file's mtime (the LRU clock). A bad entry is moved to quarantine/ and reported as corrupt.
  // `whole_sidecar` false (a hit): the sidecar's `components` read as null and its `answers` come
  // as their text in LoadResult::answers (store/local/entry_check.hpp); the tools read it whole.
  LoadResult load(const Digest128& key, bool whole_sidecar = true);

  // Writes the entry file to tmp/, renames it into place (removing a format 1 pair of the key),
  // updates the size accounting, then evicts if over max_size. Adds "binary_size" and "binary_xxh3_64" to the
  // sidecar. Replacing an existing entry of the same key keeps the accounting exact.
  SaveResult save(const Digest128& key, std::string_view binary, nlohmann::json sidecar);

  // Whether a committed entry of `key` is there (a stat, nothing read or checked).
  bool contains(const Digest128& key);

  // Deletes an entry (the driver rejected its binary). Returns false when there was none.
  bool remove(const Digest128& key);

  // Cross-process single-flight: takes <root>/locks/<key>.lock, waiting at most `wait` while
  // another process holds it (builds that key). The holder releases it once its entry is
  // committed or its build failed; a holder that dies releases it with its file descriptors.
  // Errors: resource_unavailable_try_again (held by another for the whole wait),
  // read_only_file_system (read-only store), or the I/O error. Never throws.
  // A waiter that wants the binary marks the key wanted (key_wanted), so that its holder stores it
  // at once; one that waits only to build the key itself (a capture helper) does not: the mark
  // would have a run that builds the key read its binary for the helper (on PoCL, a capture's
  // whole cost, paid in the run) and a helper that builds it work at full priority.
  enum class Waiter { wants_the_binary, builds_it_itself };
  std::error_code lock_key(const Digest128& key, std::chrono::milliseconds wait, KeyLock* lock,
                           Waiter waiter = Waiter::wants_the_binary);
  // Whether another process waits for the lock of `key` (it left a marker that the lock's holder
  // removes when it releases the lock).
  bool key_wanted(const Digest128& key) const;
  // A waiter that gave up removes that marker: left, it kept a capture helper building the key at
  // full priority beside the waiter's own build of it. Waiters still waiting mark it again at their
  // next look (every wait step marks it).
  void stop_wanting(const Digest128& key);
  // Takes the lock of `key` that this process inherited as descriptor `handle` (a capture
  // helper). Fails unless `handle` is that key's current lock file and holds its lock.
  // `owns_name`: releasing removes the lock file (false: a forked child working for the owner,
  // which removes it once the child is done).
  std::error_code adopt_key_lock(const Digest128& key, std::intptr_t handle, bool owns_name, KeyLock* lock);

  // Captures in flight (docs/concurrency.md, "Captures in flight"): <root>/locks/<key>.capture,
  // held by whoever owes the key's entry (the app that handed the key to its capture helper, then
  // the helper) until the entry is stored or given up. Taken without waiting: fails with
  // resource_unavailable_try_again when another process owes the key already. The marker says
  // how long the app's own build of the key took (`build_us`) and, once the helper starts building
  // it (mark_capture_started), since when: a process waits for the helper only for what is left
  // of a build under way, never longer than building the key itself would take.
  std::error_code mark_capture(const Digest128& key, std::uint64_t build_us, KeyLock* mark);
  // The worker process that builds a capture, and its CPU time as it started the key.
  struct CaptureWorker {
    long pid = 0;
    std::chrono::microseconds cpu{0};
  };
  // The helper, as its worker starts building `key` (it holds `mark`; a worker still loading its
  // driver has not started): the marker gets the start time and, when given, the worker (a waiter
  // weighs the worker's pace: capture/helper_pace.hpp).
  void mark_capture_started(const Digest128& key, const KeyLock& mark,
                            const std::optional<CaptureWorker>& worker = std::nullopt);
  // Takes a marker handed over as descriptor `handle` (the helper); as adopt_key_lock.
  std::error_code adopt_capture_mark(const Digest128& key, std::intptr_t handle, KeyLock* mark);
  // Whether the capture of `key` is in flight now (its marker is held).
  bool capture_in_flight(const Digest128& key) const;
  // What its marker says; nothing where it says nothing this process can trust (no marker,
  // another user's, not numbers).
  struct CaptureProgress {
    std::optional<std::chrono::microseconds> build_time;  // the app's own build of the key
    std::optional<std::int64_t> started_ns;               // wall clock: the helper started building it
    std::optional<CaptureWorker> worker;                  // who builds it (a hint: any pid may be named)
  };
  CaptureProgress capture_progress(const Digest128& key) const;
  // How many captures are in flight now (markers someone holds).
  std::size_t captures_in_flight() const;
  // Their keys (what `jitcache wait` names), in no particular order. Only looks: removes nothing.
  std::vector<Digest128> capture_keys_in_flight() const;
  // A helper's last writes (its counts, after its last key): <root>/locks/helper-<app pid>.ending,
  // taken by an app at its exit when it has a capture helper and handed to it; the helper holds it
  // until it ends. A helper that settles its last key while its app runs, or that got none, still
  // writes after the app has gone: this marker makes a wait cover those writes too.
  std::error_code mark_helper_ending(KeyLock* mark);
  // The helper of the app `app_pid` takes its ending marker, handed over as descriptor `handle`
  // (as adopt_key_lock); releasing it at the helper's end removes its file.
  std::error_code adopt_helper_ending(std::int64_t app_pid, std::intptr_t handle, KeyLock* mark);
  // Waits until no capture is in flight and no helper whose app has gone is still writing, or
  // `wait` passed; returns how many captures still are in flight (plus helpers still writing).
  // `progress(in_flight)` is called before each capture marker waited for.
  std::size_t wait_for_captures(std::chrono::milliseconds wait,
                                const std::function<void(std::size_t)>& progress = nullptr) const;

  // Apps at work on this store: a process that builds through the shim locks a file of its own in
  // <root>/locks/apps/ for as long as the store is open (its life), and removes the files there of
  // apps that ended; a capture helper runs behind them, and at full priority when none is left.
  // Best effort.
  void announce_app();
  // The apps at work now, other processes than this one: the pid of each as this process sees it
  // (fileops::ProcessLock::kHolderNotVisible where it cannot). One open per app file, whatever
  // locks the rest of the system holds.
  std::vector<std::int64_t> apps_at_work() const;

  // Recorded inputs (store/local/store_layout.hpp): stores `record` under its own XXH3-128 unless a
  // record of that name is there already (then only refreshes its mtime). Counted in the size.
  SaveResult save_inputs(std::string_view record, Digest128* digest);
  // The record named `digest` (in LoadResult::binary), checked against its name and size cap:
  // miss when absent, corrupt (and removed) when its bytes do not match its name.
  LoadResult load_inputs(const Digest128& digest);

  // Moves an entry's files to quarantine/ and fixes the accounting.
  void quarantine(const Digest128& key, const std::string& reason);

  SizeInfo size();                      // from the accounting file (rebuilt by scan if bad)
  SizeInfo rescan_size();               // full scan; rewrites the accounting file
  std::vector<EntryInfo> list();        // every committed entry, its sidecar whole (reads them all)
  // Every committed entry with only its sidecar's summary fields (store/local/shard_index.hpp), through
  // the per-shard index where it is current: what `ls`, `show` and `pack create` need.
  std::vector<EntryInfo> list_summaries(const StoreProgress& progress = nullptr);
  // The same, handed over one level-1 shard at a time in key order (each shard's entries in key
  // order), so that a listing can print its first lines before it has looked at the whole store.
  using ShardVisitor = std::function<void(std::vector<EntryInfo>& shard_entries)>;
  void visit_summaries(const ShardVisitor& visit, const StoreProgress& progress = nullptr);
  // One evictor at a time; the whole store (the automatic passes after a save look at a few shards).
  EvictionReport evict(std::uint64_t target_bytes, std::uint64_t older_than_s, const StoreProgress& progress = nullptr);
  std::vector<VerifyProblem> verify(bool quarantine_bad, const StoreProgress& progress = nullptr);
  EvictionReport clear(const StoreProgress& progress = nullptr);

  ~DiskStore();

 private:
  std::error_code adopt_lock_file(const std::filesystem::path& path, const std::filesystem::path& wanted_path,
                                  std::intptr_t handle, bool owns_name, KeyLock* lock);
  struct Impl;
  explicit DiskStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace jitcache
