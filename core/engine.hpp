// The one "lookup -> build -> store" engine shared by every API adapter. Adapters describe a build
// as ProgramInputs + TargetIdentity and ask for a Lookup per device. A hit ends with loaded(); a
// miss (or a rejected() hit) is built for real and handed to finish() with what the driver said,
// which ends it (a failure, a capture helper's) or says when to read the binary for deliver(): a
// miss is lookup(), finish(), deliver(). No OpenCL or Level Zero types here.
//
// lookup() asks the memory tier of the caller's scope, then the read-only packs (JITCACHE_PACKS,
// docs/pack-format.md), then joins or leads the in-process flight for the key (waiting for a
// leader on another thread), then the disk store, and on a miss takes the key's cross-process
// build lock (waiting for a builder in another process, then looking
// again). A lookup that misses leads the build: its end (built/failed) wakes the waiters, and the
// lock is released once the entry is committed. docs/concurrency.md has the details.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/lookup.hpp"
#include "core/memory_tier.hpp"
#include "core/settings.hpp"
#include "core/single_flight.hpp"
#include "core/trace.hpp"
#include "hashing/build_inputs.hpp"
#include "hashing/key.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {

class DiskStore;
class PackTier;
class RemoteTier;

class Engine {
 public:
  // The process-wide engine, or nullptr when the cache is disabled or unusable (warned once).
  static Engine* instance();
  // The engine if instance() made one already, else nullptr (starts nothing: for calls that only
  // let go of what the engine may hold).
  static Engine* if_started();
  // Before the first instance(): the store's directory must exist already; one that is gone stays
  // gone and the process runs uncached (the capture helper, serving a store its app made).
  static void require_existing_root();
  // The app's start (preloaded: before its main) or its first API call, before its driver loads:
  // tells capture helpers an app is at work on the store, which the engine does again at its first
  // lookup. Starts no engine and creates no store: in a store that exists, only its presence lock
  // is taken (no helper can be at work elsewhere). Quiet: the engine warns of any problem when it
  // starts.
  static void announce_app_early();

  const Settings& settings() const { return settings_; }

  // Adds what the adapter cannot know: codegen environment variables and, for source programs,
  // the #include'd headers (resolved through -I options and the working directory), and says
  // when the program must not be cached (e.g. it expands __TIME__).
  PreparedProgram prepare(ProgramInputs program) const;

  Lookup lookup(const PreparedProgram& program, const TargetIdentity& target, std::string device,
                const LookupContext& context = {});

  // Keeps what the adapter loaded for this hit in the memory tier of its scope. Call it before
  // loaded(). (A build's binary is kept by deliver().)
  void remember(const Lookup& lookup, MemoryValue value);
  // The scope (context) is gone: drop its memory-tier entries.
  void forget_scope(MemoryScope scope);

  // The cached binary served the app.
  void loaded(Lookup& lookup, std::uint64_t load_us);
  // The driver refused the cached binary: the entry is dropped; a real build follows (built/failed).
  void rejected(Lookup& lookup, const std::string& reason);
  // An entry that served a hit proved unusable after its lookup ended (an adapter decodes the
  // recorded answers only when the app first asks for one): dropped as rejected() drops it, so
  // that the next build of the key rebuilds it; one warning, counted corrupt (rejected() counts
  // stale: the driver refused). The app keeps what was loaded.
  void refuse_served(const ServedEntry& entry, const std::string& reason);
  // A real build ended: failed lookups end here; a capture helper may take the binary (capture =
  // helper, or auto on PoCL, where reading it generates every kernel's code: docs/benchmarks.md),
  // unless someone waits for the key (they need the binary now), inputs are not kept or the build
  // cannot be replayed; with capture = release (or a refresh) the adapter keeps the program and
  // reads it when the app is done with it. Else the adapter reads it now. Then deliver().
  AfterBuild finish(std::span<Lookup> lookups, const BuildEnd& end);
  // What the adapter read after finish() ends the lookup: a binary is kept in the memory tier of
  // its scope (first, so that threads waiting for the build find it there) and stored in the
  // background; an uncacheable or unloadable build ends it unstored, its reason traced (an
  // unloadable one warns once, counted capture_helper_unloadable or warm_unloadable,
  // core/replay_mark.hpp: the key stays a miss for the next build).
  void deliver(Lookup& lookup, BuildOutcome outcome);
  // In a capture helper's worker: the helper holds the build lock of `key` for this process, so
  // the lookup of that key takes no lock of its own (it would wait for the helper).
  void build_lock_held_for(const Digest128& key);
  // In a replay process: why a build of `key` ended without storing anything (the trace's
  // reason), for the replay's own report; "" when none did.
  std::string why_not_stored(const Digest128& key) const;
  // The build cannot be cached at all, known before any lookup (a lookup's build ends in deliver()),
  // or too late to end its lookup (at exit, when the driver's objects must not be released).
  void uncacheable(const ProgramInputs& program, const std::string& device, const std::string& reason);

  // Waits (bounded) for background stores, then saves the stats. At exit it also starts the
  // capture helpers still queued.
  void flush(bool at_exit = false);

 private:
  Engine(Settings settings, std::unique_ptr<DiskStore> store);
  // The parts of finish(): a failed build; whether someone waits for the key now (another thread,
  // process or, holding the remote lease, node); whether a helper can capture the build; handing
  // it to one (the lookup ends as a miss, its build lock goes to the helper: a key another process's
  // helper owes already is not handed twice).
  void failed(Lookup& lookup, const std::string& reason);
  bool awaited(const Lookup& lookup) const;
  bool helper_may_capture(const Lookup& lookup, const BuildFacts& facts) const;
  void hand_to_helper(Lookup& lookup, std::uint64_t build_us);
  // Before a missed build that a capture helper will likely store (lookup() on a miss): starts this
  // process's helper (once), which loads the driver for the lookup's device meanwhile.
  void expect_capture(const Lookup& lookup, const BuildFacts& facts);
  // The ends deliver() picks: stored (in the background), or unstored with the reason.
  void built(Lookup& lookup, BuildResult result, std::shared_ptr<const std::string> binary,
             std::shared_ptr<const std::string> answers);
  void unloadable(Lookup& lookup, std::uint64_t build_us, std::uint64_t load_check_us, const std::string& why);
  void end(Lookup& lookup);  // counts, writes the trace
  void drop(const ServedEntry& entry);  // a refused entry: out of every tier, never served again
  // The steps of lookup(), in order; each returns true when it answered the lookup.
  bool find_in_memory(Lookup& lookup);
  bool wait_for_other_thread(Lookup& lookup, const LookupContext& context);
  bool find_in_packs(Lookup& lookup);
  bool find_on_disk(Lookup& lookup);
  bool claim_across_processes(Lookup& lookup, const LookupContext& context);
  bool take_handed_lock(Lookup& lookup);
  nlohmann::json trace_record(const Lookup& lookup) const;
  TraceRetention trace_retention() const;
  // A built binary that must not be cached (its inputs changed meanwhile): ends the lookup as
  // uncacheable; the app keeps using what it built.
  void not_stored(Lookup& lookup, BuildResult result, std::string reason);
  // Ends a built lookup whose binary is not stored: no memory-tier entry, no remote lease, waiters
  // retry; the trace is written in the background.
  void end_unstored(Lookup& lookup, Verdict verdict, std::string reason);
  // A header changed after it was hashed (the build may have read another version): not_stored,
  // true. Checked before anything is stored, in the app or by a helper.
  bool refused_changed_input(Lookup& lookup, BuildResult& result);
  // store_inputs: records what a rebuild of the lookup's program needs and names it in the sidecar;
  // the record's bytes (for the remote tier), empty when none was recorded.
  std::string record_inputs_of(const Lookup& lookup, nlohmann::json* sidecar);

  Settings settings_;
  std::shared_ptr<DiskStore> store_;
  std::shared_ptr<PackTier> packs_;     // null: no packs configured
  std::shared_ptr<RemoteTier> remote_;  // null: no remote configured
  std::vector<std::string> env_patterns_;
  MemoryTier memory_;
  FlightTable flights_;
  mutable std::mutex not_stored_mutex_;
  std::map<Digest128, std::string> not_stored_;  // replay processes only (one or a few keys)
  std::mutex handed_locks_mutex_;
  std::set<Digest128> handed_locks_;  // build_lock_held_for's, until their lookup comes
  std::once_flag app_announced_;
};

}  // namespace jitcache
