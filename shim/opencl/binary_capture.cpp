#include "shim/opencl/binary_capture.hpp"

#include <cstdlib>
#include <string>
#include <atomic>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <optional>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "capture/load_back_check.hpp"
#include "core/cpu_account.hpp"
#include "core/log.hpp"
#include "core/replay_mark.hpp"
#include "core/stats.hpp"
#include "shim/opencl/driver_quirks.hpp"
#include "shim/opencl/load_back.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/program_queries.hpp"
#include "shim/opencl/recorded_queries.hpp"
#include "shim/opencl/target_identity.hpp"

namespace jitcache::opencl {
namespace {

// Keys whose refresh stored no new code (take_refresh_again).
struct RefreshAgain {
  std::mutex mutex;
  std::set<Digest128> keys;
};

RefreshAgain& again() {
  static RefreshAgain* keys = new RefreshAgain;  // never destroyed: stores run until exit
  return *keys;
}

void refresh_again(const Digest128& key) {
  std::lock_guard lock(again().mutex);
  again().keys.insert(key);
}

}  // namespace

bool take_refresh_again(const Digest128& key) {
  std::lock_guard lock(again().mutex);
  return again().keys.erase(key) > 0;
}

namespace {

struct Parked {
  std::mutex mutex;
  std::map<cl_program, BuiltProgram> programs;  // each holds one reference of ours
  std::set<cl_program> released;  // the app let go of these; the driver still held them then
  std::atomic<bool> any_released{false};
};

Parked& parked() {
  static Parked* p = new Parked;  // never destroyed: the exit handler uses it
  return *p;
}

// Ends every lookup of the build unstored, for `why`.
void deliver_uncacheable(BuiltProgram& built, const std::string& why) {
  for (Lookup& lookup : built.lookups) built.engine->deliver(lookup, BuildOutcome::cannot_cache(why));
}

// Reads each device's binary and delivers it to the engine (which keeps a single-device build's in
// the memory tier, so that a later build of the key in this context loads the bytes once).
// `after_use`: the app is done with the program (parked programs).
void store(BuiltProgram& built, bool after_use) {
  // The kernel names first: they tell whether reading the binaries could take the app down.
  // A capture helper's worker accounts for its CPU by step (core/cpu_account.hpp).
  std::optional<cpu_account::Step> answering(std::in_place, "answers");
  std::vector<std::string> kernel_names = kernel_names_of(built.program);
  if (std::string risk = binary_read_risk(built.devices, kernel_names); !risk.empty()) {
    return deliver_uncacheable(built, risk);
  }
  // What a hit must answer as this build did; without it the entry would answer otherwise.
  RecordedBuild recorded = record_build(built.program, built.devices, kernel_names);
  if (!recorded.problem.empty()) return deliver_uncacheable(built, recorded.problem);
  answering.reset();
  std::optional<cpu_account::Step> reading(std::in_place, "read_binary");  // PoCL generates the kernels' code here
  std::vector<std::string> binaries = read_binaries(built.program, built.devices);
  reading.reset();
  for (size_t d = 0; d < built.lookups.size(); ++d) {
    Lookup& lookup = built.lookups[d];
    BuildOutcome outcome = BuildOutcome::read({std::move(binaries[d]), kernel_names, std::move(recorded.logs[d]),
                                               built.build_us, std::move(recorded.answers[d]), after_use});
    std::string& binary = outcome.result.binary;
    if (binary.empty()) {
      built.engine->deliver(lookup, BuildOutcome::cannot_cache("driver returned no binary"));
      continue;
    }
    // A refresh whose binary did not grow: not kept in memory, so that the next build of the key in
    // this process looks at the store and is refreshed again (take_refresh_again).
    const bool grew = !built.earlier_binary || binary.size() > built.earlier_binary->size();
    if (built.refresh && !grew) refresh_again(lookup.key.key);
    outcome.keep_in_memory = built.uses_memory_tier && grew;
    if (built.refresh && after_use) count(counter::entry_refreshed);
    if (replay_mark()) {  // a replay (warm, helper) proves the bytes load before every app gets them (load_back.hpp)
      break_binary_for_tests(binary);
      cpu_account::Step checking("load_back");
      outcome.unloadable = load_back(built.devices[d], binary, lookup.program->options, kernel_names,
                                     &outcome.result.load_check_us);
    }
    built.engine->deliver(lookup, std::move(outcome));
  }
}

// Stores and unparks the parked programs that `pick` selects.
template <typename Pick>
bool capture_parked(Pick pick) {
  std::vector<BuiltProgram> picked;
  {
    std::lock_guard lock(parked().mutex);
    for (auto it = parked().programs.begin(); it != parked().programs.end();) {
      if (pick(it->second)) {
        parked().released.erase(it->first);
        picked.push_back(std::move(it->second));
        it = parked().programs.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (BuiltProgram& built : picked) {
    try {
      store(built, true);
    } catch (const std::exception& e) {
      log_warning(std::string("binary not stored: ") + e.what());
    }
    next().clReleaseProgram(built.program);
  }
  return !picked.empty();
}

// Parked programs are stored when the thread that calls exit() destroys its thread_local objects:
// C++ (and glibc's exit()) runs those before any atexit handler or static destructor. An atexit
// handler would run too late: a driver's in-process compiler (PoCL's LLVM) registers the
// destructors of its function-local statics when it first uses them, often at the app's first
// enqueue, after our handler was registered, so they run first and the code generation that
// reading CL_PROGRAM_BINARIES triggers at exit used freed memory (heap corruption, SIGSEGV;
// docs/reliability.md). The guard lives on the main thread, the one that returns from main().
struct ExitCapture {
  ~ExitCapture() { capture_parked([](const BuiltProgram&) { return true; }); }
};

bool on_main_thread() {
#if defined(__linux__)
  return ::syscall(SYS_gettid) == ::getpid();
#else
  return false;
#endif
}

void arm_exit_capture() {
  if (!on_main_thread()) return;
  thread_local ExitCapture guard;  // constructed once, on the main thread; destroyed by exit()
  (void)guard;
}

[[maybe_unused]] const bool g_armed_at_load = (arm_exit_capture(), true);  // LD_PRELOAD: on the main thread

// Last resort, from the atexit handler: a program still parked here was not stored by the main
// thread's guard (exit() called on another thread, or a platform without the guard). Reading its
// binary could run the driver's compiler after its statics died: on Linux it is skipped (one info
// line, counted as uncacheable); elsewhere it is stored as before.
void capture_all_at_exit() {
#if defined(__linux__)
  std::vector<BuiltProgram> left;
  {
    std::lock_guard lock(parked().mutex);
    for (auto& [program, built] : parked().programs) left.push_back(std::move(built));
    parked().programs.clear();
  }
  if (left.empty()) return;
  log_info("capture = release: " + std::to_string(left.size()) +
           " parked program(s) not stored at exit (exit() was not called on the main thread, or it "
           "never called OpenCL; reading a binary this late is unsafe)");
  // Counted and traced only: ending the lookups could release the driver's objects (the memory
  // tier's), and its statics may be gone by now.
  for (BuiltProgram& built : left) {
    for (Lookup& lookup : built.lookups) {
      built.engine->uncacheable(*lookup.program, lookup.device, "capture at exit skipped");
    }
  }
#else
  capture_parked([](const BuiltProgram&) { return true; });
#endif
}

// What the engine decides a build's capture by (Engine::finish).
BuildFacts facts_of(const BuiltProgram& built) {
  BuildFacts facts;
  facts.single_device = built.devices.size() == 1 && built.uses_memory_tier;
  facts.lazy_binary = !built.devices.empty() && target_of(built.devices.front(), next()).pocl;
  facts.parkable = built.uses_memory_tier;
  facts.refresh = built.refresh;
  // A build whose binary cannot be read safely (driver_quirks.hpp) is uncacheable here, by store().
  facts.read_risk = [&built] { return binary_read_risk(built.devices, kernel_names_of(built.program)); };
  return facts;
}

void park(BuiltProgram built) {
  static std::once_flag exit_handler;
  std::call_once(exit_handler, [] { std::atexit(capture_all_at_exit); });
  arm_exit_capture();
  next().clRetainProgram(built.program);
  std::lock_guard lock(parked().mutex);
  cl_program program = built.program;
  parked().programs[program] = std::move(built);
}

}  // namespace

void finish_build(BuiltProgram built, bool succeeded, const std::string& failure) {
  BuildEnd end{succeeded, failure, built.build_us, succeeded ? facts_of(built) : BuildFacts{}};
  switch (built.engine->finish(built.lookups, end)) {
    case AfterBuild::done: return;
    case AfterBuild::read_now: store(built, false); return;
    case AfterBuild::read_later: park(std::move(built)); return;
  }
}

bool is_parked(cl_program program) {
  arm_exit_capture();  // the layer may load on another thread: arm once the main thread calls in
  std::lock_guard lock(parked().mutex);
  return parked().programs.count(program) > 0;
}

void capture_parked_program(cl_program program) {
  capture_parked([program](const BuiltProgram& built) { return built.program == program; });
}

namespace {

// Whether the driver holds `program` for nothing but jitcache's parked reference: the commands the
// app queued with its kernels have run.
bool only_parked_reference_left(cl_program program) {
  cl_uint count = 0;
  return next().clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof count, &count, nullptr) == CL_SUCCESS &&
         count == 1;
}

}  // namespace

void capture_parked_after_release(cl_program program) {
  {
    std::lock_guard lock(parked().mutex);
    if (!parked().programs.count(program)) return;
  }
  if (only_parked_reference_left(program)) {
    capture_parked_program(program);
    return;
  }
  std::lock_guard lock(parked().mutex);
  parked().released.insert(program);
  parked().any_released = true;
}

void capture_released_parked() {
  if (!parked().any_released.load(std::memory_order_relaxed)) return;
  std::vector<cl_program> released;
  {
    std::lock_guard lock(parked().mutex);
    released.assign(parked().released.begin(), parked().released.end());
  }
  for (cl_program program : released) {
    if (only_parked_reference_left(program)) capture_parked_program(program);
  }
  std::lock_guard lock(parked().mutex);
  parked().any_released = !parked().released.empty();
}

bool is_key_parked(const Digest128& key) {
  std::lock_guard lock(parked().mutex);
  for (const auto& [program, built] : parked().programs) {
    if (built.lookups.front().key.key == key) return true;
  }
  return false;
}

bool capture_parked_key(const Digest128& key) {
  return capture_parked(
      [&key](const BuiltProgram& built) { return !built.earlier_binary && built.lookups.front().key.key == key; });
}

bool is_parked_as(cl_program program, const std::vector<cl_device_id>& devices, const Digest128& key) {
  std::lock_guard lock(parked().mutex);
  auto it = parked().programs.find(program);
  return it != parked().programs.end() && it->second.devices == devices && it->second.lookups.front().key.key == key;
}

bool answer_parked_binary_query(cl_program program, cl_program_info param, size_t param_value_size, void* param_value,
                                size_t* param_value_size_ret, cl_int& status) {
  if (param != CL_PROGRAM_BINARY_SIZES && param != CL_PROGRAM_BINARIES) return false;
  std::shared_ptr<const std::string> earlier;
  std::vector<cl_device_id> devices;
  {
    std::lock_guard lock(parked().mutex);
    auto it = parked().programs.find(program);
    if (it == parked().programs.end() || !it->second.earlier_binary) return false;
    earlier = it->second.earlier_binary;
    devices = it->second.devices;
  }
  // A program of a context with more devices, built for one: the driver knows what the others hold.
  if (program_array<cl_device_id>(program, CL_PROGRAM_DEVICES) != devices) return false;
  status = answer_binary_query(param, {earlier.get()}, param_value_size, param_value, param_value_size_ret);
  return true;
}

}  // namespace jitcache::opencl
