#include "core/capture_helper.hpp"

#include <condition_variable>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.hpp"
#include "core/stats.hpp"

extern char** environ;

namespace jitcache {
namespace {

struct Helpers {
  std::mutex mutex;
  std::condition_variable ended;
  int running = 0;
};

Helpers& helpers() {
  static Helpers* h = new Helpers;  // never destroyed: reaper threads may outlive main()
  return *h;
}

bool executable(const std::filesystem::path& path) { return ::access(path.c_str(), X_OK) == 0; }

// The helper must not run under the shim: no preload, no layer; the rest of the app's environment
// (the driver's variables, JITCACHE_DIR, ...) is what the key was derived under.
std::vector<std::string> helper_environment() {
  std::vector<std::string> out;
  for (char** variable = environ; variable && *variable; ++variable) {
    std::string_view text(*variable);
    if (text.rfind("LD_PRELOAD=", 0) == 0 || text.rfind("OPENCL_LAYERS=", 0) == 0) continue;
    out.emplace_back(text);
  }
  return out;
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A helper that ends normally counted its own failure (capture_helper_failed); one that was
  // killed (a driver crash, its time limit) could not.
  if (WIFSIGNALED(status)) {
    count("capture_helper_died");
    log_info("capture helper " + std::to_string(pid) + " died with signal " + std::to_string(WTERMSIG(status)) +
             ": that entry is built again by the next run");
  }
  std::lock_guard lock(helpers().mutex);
  --helpers().running;
  helpers().ended.notify_all();
}

}  // namespace

std::string helper_binary() {
  if (const char* set = std::getenv("JITCACHE_HELPER"); set && *set) return executable(set) ? set : "";
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&helper_binary), &info) || !info.dli_fname) return {};
  const std::filesystem::path library_dir = std::filesystem::path(info.dli_fname).parent_path();
  for (const auto& candidate : {library_dir / ".." / ".." / "bin" / "jitcache", library_dir / ".." / "bin" / "jitcache",
                                library_dir / ".." / "tools" / "jitcache"}) {
    if (executable(candidate)) return std::filesystem::weakly_canonical(candidate).string();
  }
  return {};
}

pid_t start_capture_helper(const HelperRequest& request, std::string* why) {
  const std::string binary = helper_binary();
  if (binary.empty()) {
    *why = "no jitcache binary found for the capture helper (set JITCACHE_HELPER)";
    return -1;
  }
  std::vector<std::string> arguments = {binary, "replay", "--inputs", request.inputs, "--device-digest",
                                        request.device_digest, "--expect-key", request.key, "--time-limit",
                                        std::to_string(request.time_limit_s), "--helper"};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment = helper_environment();
  std::vector<char*> envp;
  for (std::string& variable : environment) envp.push_back(variable.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own session: the terminal's signals (Ctrl-C) and the app's process group stay the app's.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigfillset(&defaults);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  pid_t pid = -1;
  int error = posix_spawn(&pid, binary.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    *why = std::string("cannot start the capture helper: ") + std::strerror(error);
    return -1;
  }
  {
    std::lock_guard lock(helpers().mutex);
    ++helpers().running;
  }
  std::thread(reap, pid).detach();
  return pid;
}

void wait_for_capture_helpers() {
  std::unique_lock lock(helpers().mutex);
  helpers().ended.wait(lock, [] { return helpers().running == 0; });
}

}  // namespace jitcache
