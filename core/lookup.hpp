// What one lookup of the engine (core/engine.hpp) carries from its start to its end: the verdict,
// the tier that answered, the timings, and what the adapter reports of a real build. Apart from
// Engine so that the tiers that fill a lookup (core/remote_tier.hpp) do not include the engine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory_tier.hpp"
#include "hashing/build_inputs.hpp"
#include "hashing/key.hpp"

namespace jitcache {

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

// What the adapter read of a build that Engine::finish told it to read, for Engine::deliver: the
// binary to store, or why there is none to store.
struct BuildOutcome {
  BuildResult result;       // its binary is stored when neither reason below is set
  std::string uncacheable;  // the build cannot be cached (the driver gave no binary, reading it is unsafe, ...)
  std::string unloadable;   // a replay's binary did not load back (shim/opencl/load_back.hpp)
  // The memory tier of the lookup's scope keeps the binary for the next build of the key in this
  // process (a refresh that stored no new code does not: the next build looks at the store again).
  bool keep_in_memory = true;

  static BuildOutcome read(BuildResult result) {
    BuildOutcome outcome;
    outcome.result = std::move(result);
    return outcome;
  }
  static BuildOutcome cannot_cache(std::string why) {
    BuildOutcome outcome;
    outcome.uncacheable = std::move(why);
    return outcome;
  }
};

// What the adapter knows of a missed build and its driver that decides what follows the build
// (Engine::finish): the adapter hands over what the driver said and is told what to do.
struct BuildFacts {
  bool single_device = false;  // one device: a capture helper can replay the build
  bool lazy_binary = false;    // reading the binary makes the driver generate every kernel's code (PoCL)
  bool parkable = false;       // the adapter can keep the program and read it when the app is done with it
  bool refresh = false;        // a hit rebuilt to store the code generated while the app runs: parked
  // Why reading this build's binary is known to break the driver ("" when it is not); asked only
  // when a helper would take the build, so that no other build costs the driver a query.
  std::function<std::string()> read_risk;
};

// How a real build ended, as the driver said it.
struct BuildEnd {
  bool succeeded = false;
  std::string failure;  // what failed, for the trace (the app gets the driver's own error)
  std::uint64_t build_us = 0;
  BuildFacts facts;
};

// What the adapter does after Engine::finish.
enum class AfterBuild {
  done,        // the build failed, or a capture helper stores it: nothing to read
  read_now,    // read the binary now, then end each lookup with Engine::deliver()
  read_later,  // keep the program; read its binary when the app is done with it, then deliver()
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
  // What the adapter knows of the build a miss leads (one device, a lazy binary): a miss that a
  // capture helper will likely store starts this process's helper at once, which loads the driver
  // while the app builds. The default expects none.
  BuildFacts build;
};

struct LookupClaim;  // engine-internal: the flight a lookup leads and the build lock it holds

// The entry that served a hit, kept past the lookup's end for Engine::refuse_served().
struct ServedEntry {
  Digest128 key;
  MemoryScope scope = kNoMemoryScope;
  bool from_pack = false;
};

// The tier that answered a hit (none: a miss).
enum class Tier { none, memory, pack, disk, remote };
// "memory", "pack", "disk", "remote" (traces, counters, messages); "" for none.
const char* tier_name(Tier tier);

struct Lookup {
  std::shared_ptr<const ProgramInputs> program;
  std::string device;  // human-readable device name, for traces and sidecars
  KeyRecord key;
  Verdict verdict = Verdict::miss;
  Tier tier = Tier::none;
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
  // Answered by `from` (pack, disk, remote): a hit with the entry's binary, its sidecar (or
  // the fields a hit reads) and its recorded answers (null: read from the sidecar).
  void hit_in(Tier from, std::string entry_binary, nlohmann::json entry_sidecar,
              std::shared_ptr<const std::string> entry_answers);
  // Answered by the memory tier of this scope, or by the thread whose build it waited for.
  void hit_in_memory(MemoryValue value);
  ServedEntry served() const { return {key.key, scope, tier == Tier::pack}; }
};

}  // namespace jitcache
