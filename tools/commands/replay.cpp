// jitcache replay (hidden): rebuilds one recorded program in this process through its API's
// adapter (core/replay.hpp; shim/opencl/replay.hpp, shim/level_zero/replay.hpp) and reports one
// JSON object. `jitcache warm` and the capture
// helper run it as a child process each, so that a driver fault costs only that program.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/replay_mark.hpp"
#include "core/platform.hpp"
#include "core/stats.hpp"
#include "shim/level_zero/replay.hpp"
#include "shim/opencl/replay.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/replay_scratch.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

struct ReplayOptions {
  std::string inputs;         // the record's digest
  std::string device_digest;  // the recorded key's device component
  std::vector<std::string> components;  // warm: "name=digest" of the recorded key: they must match
  std::string expect_key;     // capture helper: the app's key
  unsigned time_limit_s = 600;
  int result_fd = -1;
  bool helper = false;  // started by an app (capture = helper): low priority, failures counted
  std::vector<std::string> jobs;  // helper: INPUTS:DEVICE_DIGEST:KEY:LOCK_FD, one per program
  std::int64_t for_pid = 0;       // helper: the app it works for
  bool at_exit = false;           // helper: started by the app's exit flush
  std::intptr_t handed_lock = -1;  // helper's child: the key's build lock, inherited
  std::string scratch;  // the PoCL scratch folder its parent made for it (tools/lib/replay_scratch.hpp)
};

nlohmann::json result_json(const ReplayResult& result) {
  return {{"outcome", to_string(result.outcome)}, {"reason", result.reason}, {"key", result.key},
          {"device", result.device}};
}

void report(int fd, const nlohmann::json& result) {
  std::string text = result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (fd < 0) {
    std::fputs(text.c_str(), stdout);
    return;
  }
  for (std::size_t written = 0; written < text.size();) {
    ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
}

ReplayResult failure(std::string reason) {
  ReplayResult result;
  result.reason = std::move(reason);
  return result;
}

ReplayResult replay_one(const ReplayOptions& options) {
  // Stored right after the build, in this process: parking it (capture = release) or handing it
  // to another helper would defeat the point.
  platform::set_environment("JITCACHE_CAPTURE", "build");
  // A replay runs no kernel: a refresh here would mark the entry captured after use without the
  // code a real run generates, and so keep the app's next run from refreshing it.
  platform::set_environment("JITCACHE_RECAPTURE", "0");
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  if (!store) return failure(error);
  std::optional<Digest128> digest = Digest128::from_hex(options.inputs);
  if (!digest) return failure("--inputs is not a digest");
  LoadResult record = store->load_inputs(*digest);
  if (record.status != LoadStatus::hit) {
    return failure(record.status == LoadStatus::miss ? "its recorded inputs are gone from the store" : record.reason);
  }
  std::string why;
  std::optional<RecordedInputs> inputs = decode_recorded_inputs(record.binary, &why);
  if (!inputs) return failure("recorded inputs unusable: " + why);
  ReplayRequest request;
  request.device_digest = options.device_digest;
  for (const std::string& component : options.components) {
    std::size_t equals = component.find('=');
    if (equals == std::string::npos) return failure("--component is not name=digest: " + component);
    request.recorded_components[component.substr(0, equals)] = {{"digest", component.substr(equals + 1)}};
  }
  if (!options.expect_key.empty()) {
    request.expected_key = Digest128::from_hex(options.expect_key);
    if (!request.expected_key) return failure("--expect-key is not a key");
  }
  store.reset();
  // Other drivers ignore the variable; when the user keys it (env_keys), enter_recorded_context
  // sets the recorded value instead. Without a folder (none could be made): the inherited one.
  if (!options.scratch.empty()) platform::set_environment("POCL_CACHE_DIR", options.scratch);
  if (!enter_recorded_context(*inputs, &why)) return failure(why);
  std::unique_ptr<ReplayAdapter> adapter =
      inputs->api == Api::level_zero ? level_zero::replay_adapter() : opencl::replay_adapter();
  request.inputs = std::move(*inputs);
  request.handed_lock = options.handed_lock;
  request.mark.purpose = options.helper ? ReplayMark::Purpose::capture_helper : ReplayMark::Purpose::warm;
  request.mark.for_pid = options.for_pid;
  request.mark.at_exit = options.at_exit;
  return replay(request, *adapter);
}

// One program of a helper's --job list: INPUTS:DEVICE_DIGEST:KEY:LOCK_FD (LOCK_FD -1: none).
bool parse_job(const std::string& text, ReplayOptions* job) {
  std::vector<std::string> fields;
  for (std::size_t start = 0;;) {
    const std::size_t colon = text.find(':', start);
    fields.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (fields.size() != 4) return false;
  job->inputs = fields[0];
  job->device_digest = fields[1];
  job->expect_key = fields[2];
  char* end = nullptr;
  const long fd = std::strtol(fields[3].c_str(), &end, 10);
  if (fields[3].empty() || *end != '\0' || fd < -1 || fd > 1 << 20) return false;
  job->handed_lock = fd;
  return true;
}

// Built here, or already stored: anything else (no matching device, a failure) leaves the key unstored.
bool done(const ReplayResult& result) {
  return result.outcome == ReplayResult::Outcome::built || result.outcome == ReplayResult::Outcome::already_warm;
}

// A failed capture is counted here: the app may be gone.
void count_helper_failure(const char* counter_name) {
  count(counter_name);
  flush_stats(load_settings().dir, std::chrono::milliseconds(1000));
}

// A child that died (a driver crash, the time limit) may have died anywhere, the store included:
// whatever it left of its key's entry goes, so that no app loads bytes no child saw load back.
// The lock is still held here: nobody reads the entry meanwhile.
void remove_unproven_entry(const Settings& settings, const Digest128& key) {
  std::string error;
  if (std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/true, &error)) store->remove(key);
}

// The capture helper: its programs one by one, each built by a child of its own (a driver crash
// or the time limit costs that program only). This process holds every handed build lock until
// the program's child is done, so that a waiter finds the entry stored when it gets the lock.
int run_helper(const ReplayOptions& options) {
  // Tests only: the helper waits for a byte on this FIFO before it starts (it holds its locks).
  if (const char* fifo = std::getenv("JITCACHE_TEST_HELPER_PAUSE_FIFO"); fifo && *fifo) {
    const int gate = ::open(fifo, O_RDONLY | O_CLOEXEC);
    char byte = 0;
    if (gate >= 0 && ::read(gate, &byte, 1) < 0) byte = 0;
    if (gate >= 0) ::close(gate);
  }
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  for (const std::string& text : options.jobs) {
    ReplayOptions job = options;
    if (!parse_job(text, &job)) {
      count_helper_failure("capture_helper_failed");
      continue;
    }
    KeyLock held;
    std::optional<Digest128> key = Digest128::from_hex(job.expect_key);
    if (job.handed_lock >= 0 && !(store && key && !store->adopt_key_lock(*key, job.handed_lock, true, &held))) {
      job.handed_lock = -1;  // not the key's lock (closed): the child takes the lock itself
    }
    auto scratch = std::make_unique<ReplayScratch>();  // removed once the child is reaped, however it ended
    job.scratch = scratch->path().string();
    const pid_t child = ::fork();
    if (child == 0) {
      if (job.time_limit_s > 0) ::alarm(job.time_limit_s);  // SIGALRM ends a hung driver
      ReplayResult result = replay_one(job);
      if (!done(result)) count_helper_failure("capture_helper_failed");
      std::exit(done(result) ? 0 : 1);
    }
    int status = 0;
    while (child > 0 && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (child < 0) count_helper_failure("capture_helper_failed");
    if (child > 0 && WIFSIGNALED(status)) {
      count_helper_failure("capture_helper_died");
      if (key) remove_unproven_entry(settings, *key);
    }
    scratch.reset();  // before the lock: whoever waits for the key finds nothing of this build left
    held.release();   // removes the lock file: the entry is stored, or will be built again
  }
  return 0;
}

}  // namespace

Command add_replay_command(CLI::App& app) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* cli = app.add_subcommand("replay", "rebuild one recorded program (used by warm and the capture helper)");
  cli->group("");  // hidden: an internal step, documented in docs/cli.md under warm
  cli->add_option("--inputs", options->inputs, "digest of the recorded inputs");
  cli->add_option("--device-digest", options->device_digest, "the recorded key's device component digest");
  cli->add_option("--component", options->components,
                  "name=digest of a recorded key component: the key derived here must have it (repeatable)");
  cli->add_option("--expect-key", options->expect_key, "store only if the key derived here is this one");
  cli->add_option("--time-limit", options->time_limit_s, "stop after this many seconds (0: no limit)");
  cli->add_option("--result-fd", options->result_fd, "write the result to this file descriptor");
  cli->add_flag("--helper", options->helper, "run as an app's capture helper: niced, failures counted in stats");
  cli->add_option("--job", options->jobs, "helper: INPUTS:DEVICE_DIGEST:KEY:LOCK_FD of one program (repeatable)");
  cli->add_option("--for-pid", options->for_pid, "helper: the app it captures for");
  cli->add_flag("--at-exit", options->at_exit, "helper: started by the app's exit flush");
  cli->add_option("--scratch", options->scratch, "the PoCL scratch folder to build in (made and removed by the caller)");
  return {cli, [options] {
            if (options->helper) {
              (void)::nice(10);  // the app's own work comes first
              return run_helper(*options);
            }
            if (options->inputs.empty() || options->device_digest.empty()) {
              report(options->result_fd, result_json(failure("--inputs and --device-digest are required")));
              return 1;
            }
            if (options->time_limit_s > 0) ::alarm(options->time_limit_s);  // SIGALRM ends a hung driver
            ReplayResult result = replay_one(*options);
            report(options->result_fd, result_json(result));
            return done(result) ? 0 : 1;
          }};
}

}  // namespace jitcache::tool
