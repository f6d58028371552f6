#include "core/capture_helper.hpp"

#include <condition_variable>
#include <deque>
#include <iterator>
#include <optional>
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
  int running = 0;              // helpers of this process not reaped yet
  bool exiting = false;         // the exit flush took the queue: nothing starts after it
  HelperPolicy policy;          // of the latest submit (the settings do not change)
  std::deque<HelperJob> queue;  // waiting for the running helper to end, or for the exit
};

Helpers*& helpers_slot() {
  static Helpers* h = new Helpers;  // never destroyed: reaper threads may outlive main()
  return h;
}

Helpers& helpers() { return *helpers_slot(); }

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

// `jitcache replay --helper` with one --job per key. Each job's lock descriptor is inherited
// (dup2 onto itself clears close-on-exec in the child only), so the helper holds every lock the
// moment it exists; this process then lets go of its copies. -1 and `why` when it cannot start.
pid_t spawn_helper(std::vector<HelperJob>& jobs, unsigned time_limit_s, bool at_exit, std::string* why) {
  const std::string binary = helper_binary();
  if (binary.empty()) {
    *why = "no jitcache binary found for the capture helper (set JITCACHE_HELPER)";
    return -1;
  }
  std::vector<std::string> arguments = {binary, "replay", "--helper", "--for-pid", std::to_string(::getpid()),
                                        "--time-limit", std::to_string(time_limit_s)};
  if (at_exit) arguments.push_back("--at-exit");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (const HelperJob& job : jobs) {
    const int fd = static_cast<int>(job.lock.native_handle());
    if (fd >= 0) posix_spawn_file_actions_adddup2(&actions, fd, fd);
    arguments.push_back("--job");
    arguments.push_back(job.inputs + ":" + job.device_digest + ":" + job.key.hex() + ":" + std::to_string(fd));
  }
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment = helper_environment();
  std::vector<char*> envp;
  for (std::string& variable : environment) envp.push_back(variable.data());
  envp.push_back(nullptr);

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
  for (HelperJob& job : jobs) job.lock.let_go();  // the helper holds them now
  count("capture_helper_started", static_cast<std::int64_t>(jobs.size()));
  return pid;
}

void reap(pid_t pid);

// Starts `jobs` in one helper reaped by a thread of ours. Called with the mutex held.
pid_t start_locked(std::vector<HelperJob> jobs, std::string* why) {
  pid_t pid = spawn_helper(jobs, helpers().policy.time_limit_s, helpers().exiting, why);
  if (pid < 0) return -1;  // the jobs' locks are released as they go
  try {
    std::thread(reap, pid).detach();
    ++helpers().running;
  } catch (...) {
    // No thread to be had (at exit, or out of resources): the helper runs unreaped (a zombie
    // until this process ends) and the next miss may start another at once.
  }
  return pid;
}

// The next queued job: one that another process waits for (its `.wanted` marker) first.
std::optional<HelperJob> next_job_locked() {
  auto& queue = helpers().queue;
  if (queue.empty()) return std::nullopt;
  auto pick = queue.begin();
  if (DiskStore* store = helpers().policy.store) {
    for (auto it = queue.begin(); it != queue.end(); ++it) {
      if (store->key_wanted(it->key)) {
        pick = it;
        break;
      }
    }
  }
  HelperJob job = std::move(*pick);
  queue.erase(pick);
  return job;
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A helper counts what its programs' children did; one that was killed itself (its time
  // limit, a crash) could not.
  if (WIFSIGNALED(status)) {
    count("capture_helper_died");
    log_info("capture helper " + std::to_string(pid) + " died with signal " + std::to_string(WTERMSIG(status)) +
             ": its entries are built again by the next run");
  }
  std::lock_guard lock(helpers().mutex);
  --helpers().running;
  while (!helpers().exiting && helpers().policy.while_running && helpers().running == 0) {
    std::optional<HelperJob> next = next_job_locked();
    if (!next) break;
    std::vector<HelperJob> jobs;
    jobs.push_back(std::move(*next));
    std::string why;
    if (start_locked(std::move(jobs), &why) < 0) {
      count("capture_helper_not_started");
      log_info("not stored: " + why);
    }
  }
  helpers().ended.notify_all();
}

}  // namespace

std::string helper_binary() {
  if (const char* set = std::getenv("JITCACHE_HELPER"); set && *set) return executable(set) ? set : "";
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&helper_binary), &info) || !info.dli_fname) return {};
  const std::filesystem::path library_dir = std::filesystem::path(info.dli_fname).parent_path();
  // <prefix>/lib/jitcache, <prefix>/lib/<multiarch>/jitcache (the Debian package), the build tree.
  for (const auto& candidate : {library_dir / ".." / ".." / "bin" / "jitcache", library_dir / ".." / "bin" / "jitcache",
                                library_dir / ".." / "tools" / "jitcache",
                                library_dir / ".." / ".." / ".." / "bin" / "jitcache"}) {
    if (executable(candidate)) return std::filesystem::weakly_canonical(candidate).string();
  }
  return {};
}

pid_t submit_capture(HelperJob job, const HelperPolicy& policy, std::string* why) {
  std::lock_guard lock(helpers().mutex);
  helpers().policy = policy;
  if (helpers().exiting || !policy.while_running || helpers().running > 0) {
    count("capture_helper_queued");
    helpers().queue.push_back(std::move(job));
    return 0;
  }
  std::vector<HelperJob> jobs;
  jobs.push_back(std::move(job));
  return start_locked(std::move(jobs), why);
}

std::optional<KeyLock> take_queued_capture(const Digest128& key) {
  std::lock_guard lock(helpers().mutex);
  auto& queue = helpers().queue;
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    if (it->key != key) continue;
    KeyLock taken = std::move(it->lock);
    queue.erase(it);
    return taken;
  }
  return std::nullopt;
}

void start_queued_captures_at_exit() {
  std::lock_guard lock(helpers().mutex);
  helpers().exiting = true;
  if (helpers().queue.empty()) return;
  std::vector<HelperJob> jobs(std::make_move_iterator(helpers().queue.begin()),
                              std::make_move_iterator(helpers().queue.end()));
  helpers().queue.clear();
  count("capture_helper_at_exit", static_cast<std::int64_t>(jobs.size()));
  std::string why;
  if (start_locked(std::move(jobs), &why) < 0) {
    count("capture_helper_not_started");
    log_info("not stored: " + why);
  }
}

void forget_queued_captures_after_fork() {
  // In the child of fork(): the old state's mutex may be held by a thread that does not exist
  // here, so it is left alone (leaked) and the child starts afresh with no helper and no queue.
  Helpers* parents = helpers_slot();
  for (HelperJob& job : parents->queue) job.lock.let_go();  // the parent's copies keep them held
  helpers_slot() = new Helpers;
}

void wait_for_capture_helpers() {
  std::unique_lock lock(helpers().mutex);
  helpers().ended.wait(lock, [] { return helpers().running == 0; });
}

}  // namespace jitcache
