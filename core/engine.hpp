// The one "lookup -> build -> store" engine shared by every API adapter. Adapters describe a build
// as ProgramInputs + TargetIdentity, ask for a Lookup per device, and end each Lookup with exactly
// one of loaded() / rejected()+built() / built() / failed(). No OpenCL or Level Zero types here.
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
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory_tier.hpp"
#include "core/settings.hpp"
#include "core/single_flight.hpp"
#include "core/trace.hpp"
#include "hashing/build_inputs.hpp"
#include "hashing/key.hpp"
#include "store/disk_store.hpp"

namespace jitcache {

class DiskStore;
class PackTier;
class RemoteTier;

enum class Verdict { hit, miss, stale, uncacheable, failed };
const char* to_string(Verdict verdict);

struct Timings {
  std::uint64_t hash_us = 0;    // header scan + key derivation
  std::uint64_t lookup_us = 0;  // store read + verification
  std::uint64_t load_us = 0;    // driver loading the cached binary
  std::uint64_t build_us = 0;   // the real build
  std::uint64_t store_us = 0;   // background store
  std::uint64_t wait_us = 0;    // waiting for another thread or process building the same key
  std::uint64_t load_check_us = 0;  // a replay loading its binary back before the store
};

// What the adapter read back after a successful real build.
struct BuildResult {
  std::string binary;
  std::vector<std::string> kernel_names;
  std::string build_log;
  std::uint64_t build_us = 0;
  // What the adapter recorded about the build to answer queries on a hit (the sidecar's
  // "answers"; null: none). Its shape is the adapter's; the engine only carries it.
  nlohmann::json answers;
  // Read when the app was done with the program (capture = release, recapture): the binary holds
  // the code the driver generated lazily while the app ran. Recorded as "captured_after_use".
  bool captured_after_use = false;
  // A replay (warm, capture helper) loaded the binary back before storing it (shim/opencl/load_back.hpp): how long that took.
  std::uint64_t load_check_us = 0;
};

// Sidecars keep the build log up to this many bytes.
constexpr std::size_t kBuildLogExcerpt = 4096;
// The build log a hit's sidecar recorded, when it is whole (not cut to the excerpt); else none.
std::optional<std::string> recorded_build_log(const nlohmann::json& sidecar);
// The sidecar field holding BuildResult::answers (Lookup::answers on a hit).
inline constexpr const char* kAnswersField = "answers";
// BuildResult::answers as the text Lookup::answers and MemoryValue::answers carry. Invalid UTF-8 (a
// build log) is replaced, as the disk store replaces it when it writes the sidecar.
std::shared_ptr<const std::string> answers_text(const nlohmann::json& answers);
// The sidecar field set when BuildResult::captured_after_use.
inline constexpr const char* kCapturedAfterUseField = "captured_after_use";

// ProgramInputs completed by Engine::prepare, shared by the lookups of every device.
struct PreparedProgram {
  std::shared_ptr<const ProgramInputs> inputs;
  std::uint64_t prepare_us = 0;
  std::int64_t inputs_read_at_ns = 0;  // wall clock before the headers were read (files' clock)
  std::string uncacheable;  // non-empty: do not cache, this is why
  std::string working_dir;  // where relative includes were resolved (empty: no scan ran)
};

// Where a lookup runs: which memory-tier scope may answer it, and whether it may wait.
struct LookupContext {
  MemoryScope memory_scope = kNoMemoryScope;  // e.g. the cl_context; none: skip the memory tier
  // False when the caller already leads other keys of the same build (a multi-device build):
  // waiting for another leader then could deadlock, so such a lookup never waits.
  bool may_wait = true;
  // False when the driver rebuilds a program it built before cheaply (PoCL with its own kernel
  // cache on): a key whose capture is still in flight is then built here rather than waited for.
  bool wait_for_captures = true;
};

struct LookupClaim;  // engine-internal: the flight a lookup leads and the build lock it holds

// The entry that served a hit, kept past the lookup's end for Engine::refuse_served().
struct ServedEntry {
  Digest128 key;
  MemoryScope scope = kNoMemoryScope;
  bool from_pack = false;
};

struct Lookup {
  std::shared_ptr<const ProgramInputs> program;
  std::string device;  // human-readable device name, for traces and sidecars
  KeyRecord key;
  Verdict verdict = Verdict::miss;
  std::string tier;    // "memory", "pack", "disk" or "remote" on a hit
  std::string pack;    // on a pack hit: the pack file that served it
  std::string reason;  // for stale / uncacheable / failed / corrupt misses
  std::string binary;  // the cached binary on a hit (empty on a memory hit with an object)
  MemoryValue memory;  // on a memory hit: the adapter's object (when it has one) and binary
  nlohmann::json remote;  // what the remote tier did (null: not asked)
  // On a hit: the entry's sidecar, or only the fields a hit reads (packs, memory tier). Its
  // "answers" are not read from here but from `answers`.
  nlohmann::json sidecar;
  // On a hit: what the adapter recorded about the real build (BuildResult::answers, the sidecar's
  // "answers"), as JSON text, from whichever tier served it; null: none. Text, not a JSON tree:
  // building the tree cost most of a hit; the adapter decodes the text (docs/design-decisions.md).
  std::shared_ptr<const std::string> answers;
  // Set when this lookup waited for another thread whose real build of the key failed. An
  // adapter may report that failure without building; OpenCL builds anyway (see concurrency.md).
  std::string leader_failure;
  // Built here because another process's capture helper has the key: no helper of this process
  // will capture it, so none is started for it (Engine::expect_capture).
  bool captured_elsewhere = false;
  MemoryScope scope = kNoMemoryScope;
  std::int64_t inputs_read_at_ns = 0;  // from PreparedProgram: headers changed after it are too new
  std::string working_dir;             // from PreparedProgram: recorded with the inputs
  std::shared_ptr<LookupClaim> claim;  // released when the lookup ends (or is destroyed)
  Timings timings;

  bool hit() const { return verdict == Verdict::hit; }
  ServedEntry served() const { return {key.key, scope, tier == "pack"}; }
};

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

  const Settings& settings() const { return settings_; }

  // Adds what the adapter cannot know: codegen environment variables and, for source programs,
  // the #include'd headers (resolved through -I options and the working directory), and says
  // when the program must not be cached (e.g. it expands __TIME__).
  PreparedProgram prepare(ProgramInputs program) const;

  Lookup lookup(const PreparedProgram& program, const TargetIdentity& target, std::string device,
                const LookupContext& context = {});

  // Keeps what the adapter built or loaded for this lookup in the memory tier of its scope. Call
  // it before loaded()/built(), so that threads waiting for this build find it there.
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
  // A real build succeeded: store the binary in the background.
  void built(Lookup& lookup, BuildResult result);
  // Whether another thread, process or (holding the remote lease) node may wait for this lookup's
  // build now: then it needs the binary now.
  bool awaited(const Lookup& lookup) const;
  // The adapter keeps the built program and calls built() later: until then this key is not
  // awaited (its flight ends, its build lock is released) and a newcomer builds it too.
  void postpone(Lookup& lookup);
  // capture = helper: the app's build succeeded and its binary is not read here. Records the
  // inputs and has a detached helper rebuild them, check the key and store the entry
  // (core/capture_helper.hpp); the lookup ends as a miss, its build lock handed to the helper. A
  // key whose capture another process owes already (its helper has it) is not handed twice.
  void hand_to_helper(Lookup& lookup, std::uint64_t build_us);
  // Before a missed build that will likely go to a capture helper: starts this process's helper
  // (once), which loads the driver for the lookup's device meanwhile.
  void expect_capture(const Lookup& lookup);
  // In a capture helper's worker: the helper holds the build lock of `key` for this process, so
  // the lookup of that key takes no lock of its own (it would wait for the helper).
  void build_lock_held_for(const Digest128& key);
  // The real build failed (the app gets the driver's error); nothing is stored.
  void failed(Lookup& lookup, const std::string& reason);
  // A replay's binary did not load back (`why`): nothing is stored, the key stays a miss (for the
  // app's next build, or the next `jitcache warm`); one warning, counted capture_helper_unloadable
  // or warm_unloadable (core/replay_mark.hpp), the reason traced and kept for why_not_stored.
  void unloadable(Lookup& lookup, std::uint64_t build_us, std::uint64_t load_check_us, const std::string& why);
  // In a replay process: why a build of `key` ended without storing anything (the trace's
  // reason), for the replay's own report; "" when none did.
  std::string why_not_stored(const Digest128& key) const;
  // The build cannot be cached at all.
  void uncacheable(const ProgramInputs& program, const std::string& device, const std::string& reason);

  // Waits (bounded) for background stores, then saves the stats. At exit it also starts the
  // capture helpers still queued.
  void flush(bool at_exit = false);

 private:
  Engine(Settings settings, std::unique_ptr<DiskStore> store);
  void end(Lookup& lookup);  // counts, writes the trace
  void drop(const ServedEntry& entry);  // a refused entry: out of every tier, never served again
  // The steps of lookup(), in order; each returns true when it answered the lookup.
  bool find_in_memory(Lookup& lookup);
  bool wait_for_other_thread(Lookup& lookup, const LookupContext& context);
  bool find_in_packs(Lookup& lookup);
  bool find_on_disk(Lookup& lookup);
  bool claim_across_processes(Lookup& lookup, const LookupContext& context);
  bool take_handed_lock(Lookup& lookup);
  std::chrono::milliseconds helper_wait_bound(const Digest128& key, std::string* why_not) const;
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
  std::atomic<std::int64_t> helper_wait_left_us_;  // what this process may still wait for capture helpers
  std::once_flag app_announced_;
};

}  // namespace jitcache
