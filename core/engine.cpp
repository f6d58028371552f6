#include "core/engine.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "core/background_writer.hpp"
#include "core/capture_seam.hpp"
#include "core/clock.hpp"
#include "core/cpu_account.hpp"
#include "core/entry_hits.hpp"
#include "core/input_recording.hpp"
#include "core/log.hpp"
#include "core/long_wait.hpp"
#include "core/platform.hpp"
#include "core/remote_tier.hpp"
#include "core/replay_mark.hpp"
#include "core/stats.hpp"
#include "core/tier_source.hpp"
#include "core/trace.hpp"
#include "hashing/environment.hpp"
#include "hashing/include_scan.hpp"
#include "hashing/input_recheck.hpp"
#include "store/files/file_ops.hpp"
#include "store/local/disk_store.hpp"
#include "store/tiers/tiers.hpp"

namespace jitcache {
namespace {

const WaitNotice kOtherBuilder{WaitKind::other_builder, "another thread or process building the same program",
                               "JITCACHE_WAIT_MS"};
constexpr std::chrono::milliseconds kBackgroundStatsWait{100};
const WaitNotice kExitFlush{WaitKind::exit_flush, "background stores and traces at exit",
                            "JITCACHE_FLUSH_TIMEOUT_MS"};

std::atomic<Engine*> g_engine{nullptr};  // set once, by instance()
std::atomic<bool> g_create_root{true};

std::string executable_path() { return platform::executable_path(); }

// Programs whose text expands to something different on every build cannot be cached.
// Found by the rarer capitals first: OpenCL C is full of '_' (__kernel, __global), and a search
// that starts at every '_' costs a large memory hit more than the hit itself.
bool mentions(std::string_view source, std::string_view macro) {
  const std::string_view tail = macro.substr(2);  // "__DATE__" -> "DATE__"
  for (std::size_t at = source.find(tail); at != std::string_view::npos; at = source.find(tail, at + 1)) {
    if (at >= 2 && source.substr(at - 2, 2) == "__") return true;
  }
  return false;
}

std::string time_dependence(std::string_view source) {
  for (std::string_view macro : {"__DATE__", "__TIME__", "__TIMESTAMP__"}) {
    if (mentions(source, macro)) return "source uses " + std::string(macro);
  }
  return {};
}

// The counter of an uncacheable reason: its text up to the first ':' or '(' (the category, not
// the header or option that caused it, so that stats.json keeps a bounded set of names).
std::string counter_slug(const std::string& reason) {
  std::string slug;
  for (char c : reason.substr(0, reason.find_first_of(":("))) {
    if (std::isalnum(static_cast<unsigned char>(c))) slug += static_cast<char>(std::tolower(c));
    else if (!slug.empty() && slug.back() != '_') slug += '_';
  }
  while (!slug.empty() && slug.back() == '_') slug.pop_back();
  return slug.empty() ? "unknown" : slug;
}

StoreLimits limits_from(const Settings& settings) {
  StoreLimits limits;
  limits.max_size = settings.max_size;
  limits.max_age_s = settings.max_age_s;
  limits.min_entry_size = settings.min_entry_size;
  limits.max_entry_size = settings.max_entry_size;
  limits.read_only = settings.read_only;
  limits.create_root = g_create_root.load();
  return limits;
}

// The packs of JITCACHE_PACKS, or null when none is set; every pack left out is warned about.
// Without the tiers' library: one warning, no packs, the disk store serves.
std::shared_ptr<PackTier> open_packs(const Settings& settings) {
  if (settings.packs.empty()) return nullptr;
  std::string why;
  const TierFactory* tiers = tier_factory(&why);
  if (!tiers) {
    log_warning("running without packs (JITCACHE_PACKS ignored): " + why);
    return nullptr;
  }
  std::vector<std::string> warnings;
  std::shared_ptr<PackTier> packs = tiers->open_packs(settings.packs, settings.pack_keys, &warnings);
  for (const std::string& warning : warnings) log_warning(warning);
  return packs;
}

Engine* create_engine(Engine* (*make)(Settings, std::unique_ptr<DiskStore>)) {
  try {
    fileops::Dir root;  // checked once, for the config file and the store
    Settings settings = load_settings(&root);
    set_log_level(settings.log_level);
    for (const std::string& problem : settings.problems) log_warning("setting ignored: " + problem);
    if (settings.disabled) return nullptr;
    std::string error;
    std::unique_ptr<DiskStore> store = DiskStore::open(settings.dir, limits_from(settings), &error, &root);
    if (!store) {
      log_warning("running uncached: " + error);
      return nullptr;
    }
    return make(std::move(settings), std::move(store));
  } catch (const std::exception& e) {
    log_warning(std::string("running uncached: ") + e.what());
    return nullptr;
  }
}

void flush_at_exit() {
  if (Engine* engine = g_engine.load()) engine->flush(/*at_exit=*/true);
}

// Drops the lookup's flight (threads waiting in this process retry) but keeps its build lock.
KeyLock keep_build_lock(std::shared_ptr<LookupClaim>& claim);

}  // namespace

// The in-process flight a lookup leads and the cross-process build lock it holds. Whoever ends
// the lookup publishes the outcome; dropping the last copy unpublished tells the waiters to retry.
struct LookupClaim {
  FlightTable* flights = nullptr;
  Digest128 key;
  std::shared_ptr<Flight> flight;  // empty when this lookup does not lead
  KeyLock key_lock;                // not held when the store is read-only, busy or failing

  void publish(FlightOutcome outcome) {
    if (!flight) return;
    flights->finish(key, flight, std::move(outcome));
    flight.reset();
  }
  ~LookupClaim() {
    FlightOutcome gave_up;
    gave_up.reason = "the leading build ended without a result";
    publish(std::move(gave_up));
  }
};

namespace {
KeyLock keep_build_lock(std::shared_ptr<LookupClaim>& claim) {
  if (!claim) return {};
  KeyLock lock = std::move(claim->key_lock);
  claim.reset();  // publishes "abandoned" to threads of this process that wait: they look again
  return lock;
}

// A lookup handed to the background writer, without the adapter's object (a memory hit's shadow
// program): the adapter's threads release their objects, never the writer's. Released there last,
// at exit, a PoCL program's removal of its scratch folder raced the exit handler's removal of the
// same folder (shim/opencl/driver_quirks.cpp), and PoCL aborted.
std::shared_ptr<Lookup> for_writer(Lookup& lookup) {
  lookup.memory.object.reset();
  return std::make_shared<Lookup>(std::move(lookup));
}
}  // namespace

Engine::Engine(Settings settings, std::unique_ptr<DiskStore> store)
    : settings_(std::move(settings)),
      store_(std::move(store)),
      packs_(open_packs(settings_)),
      remote_(RemoteTier::open(settings_)),
      env_patterns_(keyed_patterns(parse_env_patterns(settings_.env_patterns))),
      memory_(settings_.memory_max_size, static_cast<std::size_t>(settings_.memory_max_entries)) {}

void Engine::require_existing_root() { g_create_root = false; }

Engine* Engine::instance() {
  static Engine* engine = [] {
    // Never destroyed: hooks may still run while the process tears down.
    Engine* created =
        create_engine([](Settings s, std::unique_ptr<DiskStore> d) { return new Engine(std::move(s), std::move(d)); });
    g_engine = created;
    if (created) {
      std::atexit(flush_at_exit);
      platform::at_fork(nullptr, nullptr, [] {
        g_engine.load()->flights_.reset_after_fork();
        if (CaptureSeam* capture = linked_capture()) capture->after_fork();
      });
    }
    return created;
  }();
  return engine;
}

Engine* Engine::if_started() { return g_engine.load(); }

void Engine::announce_app_early() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (replay_mark() || if_started()) return;
    try {
      fileops::Dir root;
      const Settings settings = load_settings(&root);
      if (settings.disabled) return;
      StoreLimits limits = limits_from(settings);
      limits.create_root = false;
      // Never destroyed: its presence lock is held until the process ends.
      if (DiskStore* store = DiskStore::open(settings.dir, limits, nullptr, &root).release()) store->announce_app();
    } catch (const std::exception&) {
    }
  });
}

namespace {

// The include search the compiler will really use: the app's options, then every driver flag
// variable set in the environment (drivers append those after the app's options), by name. Returns why the
// search cannot be reproduced exactly, or empty.
std::string include_search(const ProgramInputs& program, IncludeOptions* search) {
  *search = include_options(program.options);
  if (!search->not_understood.empty()) {
    return "build options: " + search->not_understood + " changes the include search";
  }
  // program.environment already holds every driver flag variable that is set (keyed_environment).
  for (const auto& [name, value] : program.environment) {
    if (value.empty() || std::find(driver_flag_variables().begin(), driver_flag_variables().end(), name) ==
                             driver_flag_variables().end()) {
      continue;
    }
    IncludeOptions extra = include_options(value);
    if (!extra.not_understood.empty()) return "driver flags: " + extra.not_understood + " in " + name;
    search->dirs.insert(search->dirs.end(), extra.dirs.begin(), extra.dirs.end());
    search->forced_includes.insert(search->forced_includes.end(), extra.forced_includes.begin(),
                                   extra.forced_includes.end());
    search->texts.insert(search->texts.end(), extra.texts.begin(), extra.texts.end());
  }
  return {};
}

}  // namespace

PreparedProgram Engine::prepare(ProgramInputs program) const {
  Stopwatch watch;
  PreparedProgram prepared;
  prepared.inputs_read_at_ns = fileops::now_ns();  // before any header is read
  program.environment = matching_environment(env_patterns_);  // env_keys + driver flag variables
  if (program.kind == ProgramKind::source || program.kind == ProgramKind::compiled) {
    IncludeOptions search;
    prepared.uncacheable = include_search(program, &search);
    if (prepared.uncacheable.empty() && (may_include(program.input) || !search.forced_includes.empty())) {
      std::error_code ec;  // the working directory is needed only now
      std::filesystem::path working_dir = std::filesystem::current_path(ec);
      prepared.working_dir = working_dir.string();
      IncludeScan scan = scan_program_includes(program.input, search.dirs, search.forced_includes, working_dir,
                                               search.texts);
      program.headers.insert(program.headers.end(), scan.headers.begin(), scan.headers.end());
      if (!scan.unresolved.empty()) prepared.uncacheable = "include scan: " + scan.unresolved;
    }
    if (prepared.uncacheable.empty()) prepared.uncacheable = time_dependence(program.input);
  }
  prepared.inputs = std::make_shared<const ProgramInputs>(std::move(program));
  prepared.prepare_us = watch.elapsed_us();
  return prepared;
}

// The answers of a sidecar parsed whole (disk, remote): null when it has none.
static std::shared_ptr<const std::string> answers_text_of(const nlohmann::json& sidecar) {
  auto it = sidecar.is_object() ? sidecar.find(kAnswersField) : sidecar.end();
  return it == sidecar.end() ? nullptr : answers_text(*it);
}

Lookup Engine::lookup(const PreparedProgram& program, const TargetIdentity& target, std::string device,
                      const LookupContext& context) {
  // From its first build on, the app is one a capture helper runs behind (DiskStore::announce_app);
  // a replay (a helper's worker, `jitcache warm`) is not.
  std::call_once(app_announced_, [this] {
    if (!replay_mark()) store_->announce_app();
  });
  Lookup lookup;
  lookup.program = program.inputs;
  lookup.device = std::move(device);
  lookup.scope = context.memory_scope;
  lookup.inputs_read_at_ns = program.inputs_read_at_ns;
  lookup.working_dir = program.working_dir;
  Stopwatch hashing;
  lookup.key = derive_key(*program.inputs, target);
  lookup.timings.hash_us = program.prepare_us + hashing.elapsed_us();

  const bool found = find_in_memory(lookup) || find_in_packs(lookup) || wait_for_other_thread(lookup, context) ||
                     find_on_disk(lookup) || claim_across_processes(lookup, context);
  if (!found && remote_) remote_->fetch(lookup);  // a hit there is written to disk once loaded
  if (lookup.hit() && !lookup.answers) lookup.answers = answers_text_of(lookup.sidecar);
  if (!lookup.hit()) expect_capture(lookup, context.build);
  return lookup;
}

bool Engine::find_in_memory(Lookup& lookup) {
  if (lookup.scope == kNoMemoryScope) return false;
  std::optional<MemoryValue> found = memory_.find(lookup.scope, lookup.key.key);
  if (!found) return false;
  lookup.hit_in_memory(std::move(*found));
  return true;
}

// Leads the key's flight, or waits for the thread that leads it. A waiter takes the leader's
// binary (a memory hit), its build failure, or, when the leader gave up, tries again.
bool Engine::wait_for_other_thread(Lookup& lookup, const LookupContext& context) {
  Stopwatch waiting;
  for (;;) {
    bool leader = false;
    std::shared_ptr<Flight> flight = flights_.join(lookup.key.key, &leader);
    if (leader) {
      lookup.claim = std::make_shared<LookupClaim>();
      lookup.claim->flights = &flights_;
      lookup.claim->key = lookup.key.key;
      lookup.claim->flight = std::move(flight);
      return false;
    }
    if (!context.may_wait) return false;  // build alongside, without leading
    std::optional<FlightOutcome> outcome;
    wait_announced(kOtherBuilder, std::chrono::milliseconds(settings_.wait_ms), [&](std::chrono::milliseconds wait) {
      outcome = flight->wait(wait);
      return outcome.has_value();
    });
    lookup.timings.wait_us += waiting.elapsed_us();
    if (!outcome) {
      log_warning("gave up waiting for another thread building " + lookup.key.key.hex() + " after " +
                  std::to_string(settings_.wait_ms) + " ms (JITCACHE_WAIT_MS): building here");
      return false;
    }
    switch (outcome->kind) {
      case FlightOutcome::Kind::built:
        if (find_in_memory(lookup)) return true;
        {
          MemoryValue value;
          value.binary = outcome->binary;
          value.compile_us = outcome->compile_us;
          value.answers = outcome->answers;
          lookup.hit_in_memory(std::move(value));
        }
        return true;
      case FlightOutcome::Kind::failed:
        lookup.leader_failure = outcome->reason;
        lookup.reason = "the build this lookup waited for failed: " + outcome->reason;
        return true;
      case FlightOutcome::Kind::abandoned:
        waiting = Stopwatch();
        continue;
    }
  }
}

// Packs are read-only and checked entry by entry: a refused entry is counted and warned about, and
// the lookup goes on to the disk store as if the pack did not hold it.
bool Engine::find_in_packs(Lookup& lookup) {
  if (!packs_ || packs_->empty()) return false;
  Stopwatch reading;
  PackLookup found = packs_->load(lookup.key.key);
  lookup.timings.lookup_us += reading.elapsed_us();
  switch (found.result.status) {
    case LoadStatus::hit:
      lookup.hit_in(Tier::pack, std::move(found.result.binary), std::move(found.result.sidecar),
                    std::move(found.result.answers));
      lookup.pack = found.pack.string();
      return true;
    case LoadStatus::corrupt:
    case LoadStatus::error:
      count(counter::pack_refused);
      log_warning("pack entry refused: " + found.pack.string() + ": " + found.result.reason);
      return false;
    case LoadStatus::miss:
      return false;
  }
  return false;
}

bool Engine::find_on_disk(Lookup& lookup) {
  Stopwatch reading;
  LoadResult loaded = store_->load(lookup.key.key, /*whole_sidecar=*/false);  // a hit reads no components
  lookup.timings.lookup_us += reading.elapsed_us();
  switch (loaded.status) {
    case LoadStatus::hit:
      lookup.hit_in(Tier::disk, std::move(loaded.binary), std::move(loaded.sidecar), std::move(loaded.answers));
      lookup.reason.clear();  // what an earlier look found (a corrupt entry another process has replaced since)
      return true;
    case LoadStatus::corrupt:
      count(counter::corrupt);
      lookup.reason = "corrupt entry quarantined: " + loaded.reason;
      log_warning(lookup.reason);
      break;
    case LoadStatus::error:
      count(counter::error);
      lookup.reason = "store read failed: " + loaded.reason;
      log_warning(lookup.reason);
      break;
    case LoadStatus::miss:
      break;
  }
  return false;
}

// On a disk miss the leader takes the key's build lock. Getting it after a wait means another
// process built the key meanwhile: its entry is committed now, so look again. A key whose capture
// is in flight is waited for as the capture helper says (core/capture_seam.hpp).
bool Engine::claim_across_processes(Lookup& lookup, const LookupContext& context) {
  if (settings_.read_only) return false;
  if (!lookup.claim) {  // not leading in this process: only take a free lock
    lookup.claim = std::make_shared<LookupClaim>();
    lookup.claim->flights = &flights_;
    lookup.claim->key = lookup.key.key;
  }
  bool wait = context.may_wait && lookup.claim->flight;
  std::chrono::milliseconds bound(wait ? settings_.wait_ms : 0);
  CaptureSeam* capture = wait ? linked_capture() : nullptr;
  std::unique_ptr<CaptureWait> for_helper;
  if (capture && store_->capture_in_flight(lookup.key.key)) {
    for_helper = capture->wait_for_key(*store_, lookup.key.key, settings_, context.wait_for_captures);
    bound = for_helper->bound();
    if (bound.count() == 0) {
      wait = false;
      lookup.reason = for_helper->built_here();
      lookup.captured_elsewhere = true;
    }
  }
  Stopwatch waiting;
  std::error_code error;
  bool no_use = false;
  if (!take_handed_lock(lookup)) {
    wait_announced(kOtherBuilder, bound, [&](std::chrono::milliseconds attempt_bound) {
      error = for_helper && wait ? for_helper->lock(attempt_bound, &lookup.claim->key_lock, &no_use)
                                 : store_->lock_key(lookup.key.key, attempt_bound, &lookup.claim->key_lock);
      return error != std::errc::resource_unavailable_try_again || no_use;  // done, failed otherwise, or no use
    });
  }
  lookup.timings.wait_us += waiting.elapsed_us();
  if (for_helper) for_helper->waited(waiting.elapsed_us());
  if (error) {
    if (for_helper && wait && error == std::errc::resource_unavailable_try_again) {
      // Its helper still has the key and stores it: none of this process captures it again.
      lookup.reason = for_helper->gave_up(waiting.elapsed_us());
      lookup.captured_elsewhere = true;
    } else if (wait && error == std::errc::resource_unavailable_try_again) {
      log_warning("gave up waiting for another process building " + lookup.key.key.hex() + " after " +
                  std::to_string(settings_.wait_ms) + " ms (JITCACHE_WAIT_MS): building here");
    } else if (wait) {
      log_info("building without the build lock of " + lookup.key.key.hex() + ": " + error.message());
    }
    return false;
  }
  if (!find_on_disk(lookup)) return false;
  lookup.claim->key_lock.release();  // nothing to build
  return true;
}

// A capture helper's worker builds keys whose build locks the helper holds for it.
bool Engine::take_handed_lock(Lookup& lookup) {
  std::lock_guard lock(handed_locks_mutex_);
  return handed_locks_.erase(lookup.key.key) > 0;
}

void Engine::build_lock_held_for(const Digest128& key) {
  std::lock_guard guard(handed_locks_mutex_);
  handed_locks_.insert(key);
}

void Engine::remember(const Lookup& lookup, MemoryValue value) {
  if (lookup.scope == kNoMemoryScope) return;
  if (!value.answers) value.answers = lookup.answers;
  memory_.insert(lookup.scope, lookup.key.key, std::move(value));
}

void Engine::forget_scope(MemoryScope scope) { memory_.erase_scope(scope); }

void Engine::loaded(Lookup& lookup, std::uint64_t load_us) {
  lookup.timings.load_us = load_us;
  count(lookup.tier == Tier::memory   ? counter::hit_memory
        : lookup.tier == Tier::remote ? counter::hit_remote
        : lookup.tier == Tier::pack   ? counter::hit_pack
                                      : counter::hit_disk);
  count_entry_hit(lookup.key.key.hex());
  std::int64_t compile_us = lookup.sidecar.value("compile_time_us", std::int64_t{0});
  count(counter::time_saved_us, std::max<std::int64_t>(0, compile_us - static_cast<std::int64_t>(load_us)));
  if (lookup.claim) {
    FlightOutcome outcome;
    outcome.kind = FlightOutcome::Kind::built;
    outcome.binary = lookup.memory.binary ? lookup.memory.binary : std::make_shared<const std::string>(lookup.binary);
    outcome.compile_us = static_cast<std::uint64_t>(std::max<std::int64_t>(0, compile_us));
    outcome.answers = lookup.memory.answers ? lookup.memory.answers : lookup.answers;
    lookup.claim->publish(std::move(outcome));
    // A remote hit keeps the build lock until it is on disk: this machine's other processes,
    // waiting for that lock, then find it there instead of asking the remote again.
    if (lookup.tier != Tier::remote) lookup.claim.reset();
  }
  // Waking the writer costs a hit more than the rest of a memory hit: only when there is work.
  if (lookup.tier != Tier::remote && !settings_.trace) return;
  auto finished = for_writer(lookup);
  BackgroundWriter::instance().post([this, finished] {
    if (finished->tier == Tier::remote) {
      Stopwatch storing;
      store_->save(finished->key.key, finished->binary, finished->sidecar);
      finished->timings.store_us = storing.elapsed_us();
      finished->claim.reset();
      remote_->backfill(finished->key.key, finished->binary, finished->sidecar, finished->remote);
    }
    end(*finished);
  });
}

void Engine::rejected(Lookup& lookup, const std::string& reason) {
  count(counter::stale);
  drop(lookup.served());
  lookup.verdict = Verdict::stale;
  lookup.reason = "driver rejected the cached binary: " + reason;
  lookup.binary.clear();
  lookup.memory = {};
  log_info(lookup.reason + " (" + lookup.key.key.hex() + ")");
}

void Engine::drop(const ServedEntry& entry) {
  if (entry.scope != kNoMemoryScope) memory_.erase(entry.scope, entry.key);
  if (entry.from_pack) packs_->refuse(entry.key);  // read-only: skipped from now on
  else store_->remove(entry.key);
}

void Engine::refuse_served(const ServedEntry& entry, const std::string& reason) {
  count(counter::corrupt);  // its record, not the driver, refused it
  drop(entry);
  log_warning("cache entry " + entry.key.hex() + " dropped after it was served: " + reason);
}

void Engine::deliver(Lookup& lookup, BuildOutcome outcome) {
  BuildResult& result = outcome.result;
  if (!outcome.uncacheable.empty()) return not_stored(lookup, std::move(result), std::move(outcome.uncacheable));
  if (!outcome.unloadable.empty()) return unloadable(lookup, result.build_us, result.load_check_us, outcome.unloadable);
  if (refused_changed_input(lookup, result)) return;
  auto binary = std::make_shared<const std::string>(std::move(result.binary));
  std::shared_ptr<const std::string> answers = result.answers.is_null() ? nullptr : answers_text(result.answers);
  if (outcome.keep_in_memory) remember(lookup, {nullptr, binary, binary->size(), result.build_us, answers});
  built(lookup, std::move(result), std::move(binary), std::move(answers));
}

void Engine::built(Lookup& lookup, BuildResult result, std::shared_ptr<const std::string> binary,
                   std::shared_ptr<const std::string> answers) {
  count(capture_helper_mark() ? "captured_by_helper" : counter::miss);
  lookup.timings.build_us = result.build_us;
  lookup.timings.load_check_us = result.load_check_us;
  nlohmann::json sidecar = {
      {"schema", kKeySchemaVersion},
      {"api", to_string(lookup.program->api)},
      {"kind", to_string(lookup.program->kind)},
      {"key", lookup.key.key.hex()},
      {"device", lookup.device},
      {"components", lookup.key.to_json()["components"]},
      {"compile_time_us", result.build_us},
      {"created", iso8601_now()},
      {"created_by", executable_path()},
      {"kernel_names", result.kernel_names},
      {"build_log", result.build_log.substr(0, kBuildLogExcerpt)},
  };
  if (!settings_.label.empty()) sidecar["label"] = settings_.label;
  if (result.captured_after_use) sidecar[kCapturedAfterUseField] = true;
  if (!result.answers.is_null()) sidecar[kAnswersField] = std::move(result.answers);
  if (lookup.claim) {  // waiting threads take the binary now; other processes once it is stored
    FlightOutcome outcome;
    outcome.kind = FlightOutcome::Kind::built;
    outcome.binary = binary;
    outcome.compile_us = result.build_us;
    outcome.answers = answers;
    lookup.claim->publish(std::move(outcome));
  }
  auto pending = for_writer(lookup);
  BackgroundWriter::instance().post([this, pending, binary, sidecar = std::move(sidecar)]() mutable {
    Stopwatch storing;
    std::string inputs = record_inputs_of(*pending, &sidecar);
    if (remote_) remote_->publish(pending->key.key, *binary, sidecar, inputs);
    SaveResult saved = store_->save(pending->key.key, *binary, std::move(sidecar));
    pending->timings.store_us = storing.elapsed_us();
    pending->claim.reset();  // committed (or failed): other processes may look now
    if (saved.status == SaveStatus::stored) {
      count(counter::store);
      count(counter::bytes_stored, static_cast<std::int64_t>(binary->size()));
    } else if (saved.status == SaveStatus::skipped) {
      count(counter::store_skipped);
    } else {
      count(counter::error);
      log_warning("could not store a binary: " + saved.reason);
    }
    if (saved.evicted_entries) count(counter::eviction, static_cast<std::int64_t>(saved.evicted_entries));
    end(*pending);
    // Briefly: a stuck stats.lock must not hold up the stores queued behind this one; the
    // counts stay pending and the exit flush tries again.
    flush_stats(store_->root(), std::min(std::chrono::milliseconds(settings_.flush_timeout_ms), kBackgroundStatsWait));
  });
}

std::string Engine::record_inputs_of(const Lookup& lookup, nlohmann::json* sidecar) {
  if (!settings_.store_inputs) {
    forget_source_text(sidecar);
    return {};
  }
  std::string why, encoded;
  std::optional<Digest128> digest = store_recorded_inputs(*store_, *lookup.program, lookup.working_dir, &why, &encoded);
  if (digest) {
    (*sidecar)["inputs"] = digest->hex();
  } else {
    (*sidecar)["inputs_not_recorded"] = why;
    log_info("inputs not recorded for " + lookup.key.key.hex() + ": " + why);
  }
  return encoded;
}

void Engine::hand_to_helper(Lookup& lookup, std::uint64_t build_us) {
  BuildResult unread;  // the binary stays in the driver
  unread.build_us = build_us;
  if (refused_changed_input(lookup, unread)) return;
  count(counter::miss);
  lookup.timings.build_us = build_us;
  auto pending = for_writer(lookup);
  auto lock = std::make_shared<KeyLock>(keep_build_lock(pending->claim));  // handed to the helper
  BackgroundWriter::instance().post([this, pending, lock] {
    std::string why;
    // The record goes to the helper with the job (it stores it with the entry): the app takes no
    // store-wide lock here, which a niced helper starved by other work could hold for seconds.
    std::optional<std::string> record = encode_program_inputs(*pending->program, pending->working_dir, &why);
    const bool inputs = record.has_value();
    CaptureSeam* capture = linked_capture();
    if (inputs && !capture) why = "no capture helper on this platform";
    KeyLock mark;
    if (inputs && capture && (store_->capture_in_flight(pending->key.key) ||  // checked first: marking may wait a moment
                   store_->mark_capture(pending->key.key, pending->timings.build_us, &mark) ==
                       std::errc::resource_unavailable_try_again)) {
      // Another run's helper has this key (this run built it before that helper came to it).
      const std::string why_not = "not captured here: another process's capture helper has this key";
      pending->reason = pending->reason.empty() ? why_not : pending->reason + "; " + why_not;
      end(*pending);
      return;
    }
    if (inputs && capture && !mark.held()) {
      why = "cannot mark its capture in flight (" + store_->root().string() + "/locks)";
    }
    if (inputs && mark.held()) {
      CaptureJob job;
      job.inputs = xxh3_128(*record).hex();
      job.record = std::move(*record);
      for (const KeyComponent& component : pending->key.components) {
        if (component.name == "device") job.device_digest = component.digest.hex();
      }
      job.key = pending->key.key;
      job.mark = std::move(mark);
      job.lock = std::move(*lock);
      const long pid = capture->hand_over(std::move(job), settings_, &why);
      // After what the lookup found (e.g. a corrupt entry quarantined), not instead of it.
      std::string captured = pid > 0 ? "binary captured outside the app by helper pid " + std::to_string(pid)
                                     : "binary captured outside the app by helper (queued: it starts at exit)";
      if (pid >= 0) pending->reason = pending->reason.empty() ? captured : pending->reason + "; " + captured;
    }
    if (!why.empty()) {
      count("capture_helper_not_started");
      pending->reason = "not stored: no capture helper: " + why;
      log_info(pending->reason + " (" + pending->key.key.hex() + ")");
    }
    end(*pending);
  });
}

void Engine::expect_capture(const Lookup& lookup, const BuildFacts& facts) {
  if (!helper_may_capture(lookup, facts)) return;
  // A key another run's helper captures needs none here; a helper started anyway would warm the
  // driver on the core this run needs (a run right after a cold run of the same app).
  CaptureSeam* capture = linked_capture();
  if (!capture || settings_.helper_start != HelperStart::one_at_a_time || replay_mark() || lookup.captured_elsewhere) return;
  for (const KeyComponent& component : lookup.key.components) {
    if (component.name == "device") capture->expect(component.digest.hex(), settings_);
  }
}

bool Engine::helper_may_capture(const Lookup& lookup, const BuildFacts& facts) const {
  if (settings_.capture != Capture::helper && settings_.capture != Capture::automatic) return false;
  // No inputs kept: the helper has nothing to rebuild from. A refresh must run the app's kernels.
  if (!settings_.store_inputs || !facts.single_device || facts.refresh) return false;
  const ProgramKind kind = lookup.program->kind;
  if (kind != ProgramKind::source && kind != ProgramKind::il) return false;  // what a helper replays
  if (settings_.capture == Capture::automatic && !facts.lazy_binary) return false;
  // `auto` with no `jitcache` binary to run (a library copied alone, a build without the tool)
  // captures in the app, as `build`: handing the entry to a helper that cannot start loses it.
  // (`helper` says to hand it over whatever: hand_to_helper then says why none started.)
  if (settings_.capture != Capture::automatic) return true;
  CaptureSeam* capture = linked_capture();
  return capture && capture->can_hand_over();
}

AfterBuild Engine::finish(std::span<Lookup> lookups, const BuildEnd& end) {
  if (!end.succeeded) {
    for (Lookup& lookup : lookups) failed(lookup, end.failure);
    return AfterBuild::done;
  }
  if (lookups.empty()) return AfterBuild::done;
  Lookup& first = lookups.front();
  const BuildFacts& facts = end.facts;
  // A build whose binary cannot be read safely is uncacheable (the adapter's read says why): a
  // helper would rebuild it on every run only to find the same.
  if (lookups.size() == 1 && helper_may_capture(first, facts) && !awaited(first) &&
      (!facts.read_risk || facts.read_risk().empty())) {
    hand_to_helper(first, end.build_us);
    return AfterBuild::done;
  }
  if ((settings_.capture == Capture::release || facts.refresh) && facts.parkable && !awaited(first)) {
    // Until the adapter reads it, this key is not awaited: its flight ends, its build lock is
    // released, and a newcomer builds it too.
    first.claim.reset();
    return AfterBuild::read_later;
  }
  return AfterBuild::read_now;
}

// The key holds the headers as they were when hashed; the build may have read other versions
// (an editor save, a checkout meanwhile). Such a binary is used by the app but never stored.
bool Engine::refused_changed_input(Lookup& lookup, BuildResult& result) {
  std::string changed = changed_input(lookup.program->headers, lookup.inputs_read_at_ns);
  if (changed.empty()) return false;
  not_stored(lookup, std::move(result), "input changed during the build: " + changed);
  return true;
}

void Engine::not_stored(Lookup& lookup, BuildResult result, std::string reason) {
  count(counter::uncacheable_prefix + counter_slug(reason));
  log_info(reason + " (" + lookup.key.key.hex() + ")");
  lookup.timings.build_us = result.build_us;
  end_unstored(lookup, Verdict::uncacheable, std::move(reason));
}

void Engine::unloadable(Lookup& lookup, std::uint64_t build_us, std::uint64_t load_check_us, const std::string& why) {
  const bool helper = capture_helper_mark() != nullptr;
  count(helper ? counter::capture_helper_unloadable : counter::warm_unloadable);
  log_warning(std::string(helper ? "the capture helper's binary did not load back; not stored, the app builds it again ("
                                 : "jitcache warm: the rebuilt binary did not load back; not stored (") +
              lookup.key.key.hex() + "): " + why);
  lookup.timings.build_us = build_us;
  lookup.timings.load_check_us = load_check_us;
  end_unstored(lookup, Verdict::failed, "built, but its binary did not load back: " + why);
}

void Engine::end_unstored(Lookup& lookup, Verdict verdict, std::string reason) {
  lookup.verdict = verdict;
  lookup.reason = std::move(reason);
  if (replay_mark()) {  // its report says why (replay.hpp); an app keeps nothing per key
    std::lock_guard lock(not_stored_mutex_);
    not_stored_[lookup.key.key] = lookup.reason;
  }
  if (lookup.scope != kNoMemoryScope) memory_.erase(lookup.scope, lookup.key.key);
  if (remote_) remote_->abandon(lookup.key.key);
  lookup.claim.reset();  // waiters retry and build for themselves
  auto finished = for_writer(lookup);
  BackgroundWriter::instance().post([this, finished] { end(*finished); });
}

std::string Engine::why_not_stored(const Digest128& key) const {
  std::lock_guard lock(not_stored_mutex_);
  auto it = not_stored_.find(key);
  return it == not_stored_.end() ? std::string() : it->second;
}

bool Engine::awaited(const Lookup& lookup) const {
  if (remote_ && remote_->holds_lease(lookup.key.key)) return true;  // other nodes' waiters are unseen
  if (!lookup.claim) return false;
  if (lookup.claim->flight && lookup.claim->flight->awaited()) return true;
  return lookup.claim->key_lock.held() && store_->key_wanted(lookup.key.key);
}

void Engine::failed(Lookup& lookup, const std::string& reason) {
  count(counter::miss);
  if (remote_) remote_->abandon(lookup.key.key);
  lookup.verdict = Verdict::failed;
  lookup.reason = reason;
  if (lookup.claim) {
    FlightOutcome outcome;
    outcome.kind = FlightOutcome::Kind::failed;
    outcome.reason = reason;
    lookup.claim->publish(std::move(outcome));
    lookup.claim.reset();
  }
  auto finished = for_writer(lookup);
  BackgroundWriter::instance().post([this, finished] { end(*finished); });
}

void Engine::uncacheable(const ProgramInputs& program, const std::string& device, const std::string& reason) {
  count(counter::uncacheable_prefix + counter_slug(reason));
  if (!settings_.trace) return;
  nlohmann::json record = {{"time", iso8601_now()},   {"pid", fileops::current_process_id()}, {"api", to_string(program.api)},
                           {"kind", to_string(program.kind)}, {"device", device}, {"verdict", "uncacheable"},
                           {"reason", reason}};
  BackgroundWriter::instance().post(
      [this, record] { write_trace(settings_.trace_dir, record, nullptr, trace_retention()); });
}

nlohmann::json Engine::trace_record(const Lookup& lookup) const {
  nlohmann::json key = lookup.key.to_json();
  nlohmann::json record = {
      {"time", iso8601_now()},
      {"pid", fileops::current_process_id()},
      {"process", executable_path()},
      {"api", to_string(lookup.program->api)},
      {"kind", to_string(lookup.program->kind)},
      {"device", lookup.device},
      {"key", lookup.key.key.hex()},
      {"key_schema", kKeySchemaVersion},
      {"components", key["components"]},
      // A capture helper's build is the app's miss captured: "captured", so that nobody counts it twice.
      {"verdict", capture_helper_mark() && lookup.verdict == Verdict::miss ? "captured" : to_string(lookup.verdict)},
      {"tier", tier_name(lookup.tier)},
      {"pack", lookup.pack},
      {"label", settings_.label},
      {"reason", lookup.reason},
      {"remote", lookup.remote},
      {"timings_us",
       {{"hash", lookup.timings.hash_us},
        {"lookup", lookup.timings.lookup_us},
        {"load", lookup.timings.load_us},
        {"build", lookup.timings.build_us},
        {"store", lookup.timings.store_us},
        {"wait", lookup.timings.wait_us},
        {"load_check", lookup.timings.load_check_us}}},
  };
  if (const ReplayMark* helper = capture_helper_mark()) {
    // The helper's work made visible (explain, the tests): for whom, and when it ran.
    record["capture_helper"] = {{"for_pid", helper->for_pid}, {"at_exit", helper->at_exit},
                                {"waited_for", helper->waited_for}, {"started_us", helper->started_us},
                                {"ended_us", monotonic_us()}, {"nice", helper->nice}};
    if (helper->group_nice >= 0) record["capture_helper"]["group_nice"] = helper->group_nice;
    record["capture_helper"]["driver_cache"] = helper->in_apps_driver_cache ? "app" : "scratch";
  }
  return record;
}

TraceRetention Engine::trace_retention() const {
  return {settings_.trace_max_files, settings_.trace_max_size, settings_.trace_max_age_s};
}

void Engine::end(Lookup& lookup) {
  // A capture helper's worker: the key's CPU by step (core/cpu_account.hpp) to the stats and the
  // trace. The helper counts its own CPU itself; its share of this key only goes into the trace.
  const cpu_account::Taken cpu = capture_helper_mark() ? cpu_account::take() : cpu_account::Taken{};
  for (const auto& [step, us] : cpu.own) count(counter::helper_cpu_prefix + step, static_cast<std::int64_t>(us));
  if (!settings_.trace) return;
  nlohmann::json record = trace_record(lookup);
  if (!cpu.own.empty()) {
    nlohmann::json& seconds = record["helper_cpu"] = nlohmann::json::object();
    for (const auto* steps : {&cpu.own, &cpu.other}) {
      for (const auto& [step, us] : *steps) seconds[step] = static_cast<double>(us) / 1e6;
    }
  }
  write_trace(settings_.trace_dir, std::move(record), lookup.program.get(), trace_retention());
}

// Everything the exit waits for (background stores and traces, stats.lock, the hits lock) comes
// out of one flush_timeout.
void Engine::flush(bool at_exit) {
  const auto bound = std::chrono::milliseconds(settings_.flush_timeout_ms);
  const auto deadline = std::chrono::steady_clock::now() + bound;
  auto left = [&] {
    return std::max(std::chrono::milliseconds(0), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      deadline - std::chrono::steady_clock::now()));
  };
  bool drained = wait_announced(kExitFlush, bound, [&](std::chrono::milliseconds wait) {
    return BackgroundWriter::instance().drain(wait);
  });
  if (CaptureSeam* capture = linked_capture()) capture->flushed(at_exit, *store_);  // after the hand-overs drained above
  if (!drained) {
    log_warning("gave up waiting for background stores and traces after " + std::to_string(settings_.flush_timeout_ms) +
                " ms (JITCACHE_FLUSH_TIMEOUT_MS); what was still pending is lost");
  }
  flush_stats(store_->root(), left());
  if (!settings_.read_only) flush_entry_hits(store_->root(), left());
}

}  // namespace jitcache
