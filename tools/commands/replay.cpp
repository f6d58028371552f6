// jitcache replay (hidden): rebuilds one recorded program in this process through its API's
// adapter (capture/replay.hpp; shim/opencl/replay.hpp, shim/level_zero/replay.hpp) and reports one
// JSON object. `jitcache warm` and the capture helper run it as a child process each, so that a
// driver fault costs only that program. `--helper` runs the capture helper itself
// (capture/helper_process.hpp) with the adapters as its work.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/helper_priority.hpp"
#include "capture/helper_process.hpp"
#include "core/engine.hpp"
#include "core/platform.hpp"
#include "core/replay_mark.hpp"
#include "core/stats.hpp"
#include "shim/level_zero/replay.hpp"
#include "shim/opencl/pocl_cache_folder.hpp"
#include "shim/opencl/replay.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

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

// Rebuilds one recorded program in this process (capture/replay.hpp) as `options` say.
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
  std::string bytes;
  if (options.record) {  // sent by the app with the job: it must be what the digest names
    if (xxh3_128(*options.record) != *digest) return failure("the recorded inputs sent are not the named ones");
    bytes = *options.record;
  } else {
    LoadResult record = store->load_inputs(*digest);
    if (record.status != LoadStatus::hit) {
      return failure(record.status == LoadStatus::miss ? "its recorded inputs are gone from the store" : record.reason);
    }
    bytes = std::move(record.binary);
  }
  std::string why;
  std::optional<RecordedInputs> inputs = decode_recorded_inputs(bytes, &why);
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
  request.lock_held_by_parent = options.lock_held_by_parent;
  request.mark.purpose = options.helper ? ReplayMark::Purpose::capture_helper : ReplayMark::Purpose::warm;
  request.mark.for_pid = options.for_pid;
  request.mark.at_exit = options.at_exit;
  request.mark.waited_for = options.waited_for;
  if (options.helper) {
    request.mark.group_nice = group_nice();
    request.mark.nice = ::getpriority(PRIO_PROCESS, 0);
  }
  request.mark.in_apps_driver_cache = options.in_apps_driver_cache;
  return replay(request, *adapter);
}

// The capture helper: builds the jobs its app sends until the app closes the socket.
int run_helper(const ReplayOptions& options) {
  if (options.socket_fd < 0) return 2;
  const Settings settings = load_settings();
  std::string error;
  // The app made the root; one removed since (an unmounted disk, say) stays gone: for this
  // process's store and for its workers' engines.
  Engine::require_existing_root();
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/true, &error, /*create_root=*/false);
  if (!store) {
    count_helper_failure("capture_helper_failed");
    return 1;
  }
  HelperWork work;
  work.replay_one = replay_one;
  work.warm_up = [](const std::string& device_digest, bool load_compiler) {
    std::unique_ptr<ReplayAdapter> adapter = opencl::replay_adapter();
    jitcache::warm_up(device_digest, *adapter, load_compiler);
  };
  std::optional<std::filesystem::path> apps_driver_cache;
  if (!opencl::pocl_kernel_cache_off()) apps_driver_cache = opencl::pocl_cache_folder();
  return run_capture_helper(options, *store, settings, work, std::move(apps_driver_cache));
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
  cli->add_option("--socket-fd", options->socket_fd, "helper: the socket its app sends jobs on");
  cli->add_option("--for-pid", options->for_pid, "helper: the app it captures for");
  cli->add_option("--scratch", options->scratch, "the PoCL scratch folder to build in (made and removed by the caller)");
  return {cli, [options] {
            if (options->helper) {
              run_behind_the_app();
              return run_helper(*options);
            }
            if (options->inputs.empty() || options->device_digest.empty()) {
              report(options->result_fd, result_json(failure("--inputs and --device-digest are required")));
              return 1;
            }
            if (options->time_limit_s > 0) ::alarm(options->time_limit_s);  // SIGALRM ends a hung driver
            ReplayResult result = replay_one(*options);
            report(options->result_fd, result_json(result));
            return replay_done(result) ? 0 : 1;
          }};
}

}  // namespace jitcache::tool
