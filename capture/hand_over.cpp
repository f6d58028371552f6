#include "capture/hand_over.hpp"

#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/fd_passing.hpp"
#include "capture/helper_environment.hpp"
#include "core/log.hpp"
#include "core/stats.hpp"
#include "store/files/trusted_file.hpp"

extern char** environ;

namespace jitcache {
namespace {

// The helper finds its socket here (and nothing else of the app's open files: all others are closed).
constexpr int kHelperSocketFd = 3;

struct Helpers {
  std::mutex mutex;
  std::condition_variable ended;
  int socket = -1;              // this process's end of the running helper's socket; -1: none
  pid_t pid = 0;                // that helper
  int running = 0;              // helpers of this process not reaped yet
  bool exiting = false;         // the exit flush ran: nothing is kept for later after it
  unsigned time_limit_s = 600;  // per program (HelperPolicy)
  bool prestarted = false;      // prestart_capture_helper ran
  std::deque<CaptureJob> kept;   // helper_start = at_exit: handed over at the exit
};

Helpers*& helpers_slot() {
  static Helpers* h = new Helpers;  // never destroyed: reaper threads may outlive main()
  return h;
}

Helpers& helpers() { return *helpers_slot(); }

void reap(pid_t pid);

// `jitcache replay --helper`, its end of a SOCK_SEQPACKET socket as descriptor 3 and no other of
// this process's files (a parent that waits on a pipe the app holds must not wait for the helper).
bool spawn_locked(unsigned time_limit_s, std::string* why) {
  const std::string binary = helper_binary();
  if (binary.empty()) {
    *why = "no jitcache binary found for the capture helper (set JITCACHE_HELPER)";
    return false;
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    *why = std::string("cannot start the capture helper: socketpair: ") + std::strerror(errno);
    return false;
  }
  std::vector<std::string> arguments = {binary, "replay", "--helper", "--for-pid", std::to_string(::getpid()),
                                        "--time-limit", std::to_string(time_limit_s),
                                        "--socket-fd", std::to_string(kHelperSocketFd)};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment = helper_environment(environ);
  std::vector<char*> envp;
  for (std::string& variable : environment) envp.push_back(variable.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pair[1], kHelperSocketFd);  // dup2 clears close-on-exec
  posix_spawn_file_actions_addclosefrom_np(&actions, kHelperSocketFd + 1);
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
  const int error = posix_spawn(&pid, binary.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pair[1]);
  if (error != 0) {
    ::close(pair[0]);
    *why = std::string("cannot start the capture helper: ") + std::strerror(error);
    return false;
  }
  count("capture_helper_processes");
  Helpers& h = helpers();
  h.socket = pair[0];
  h.pid = pid;
  try {
    std::thread(reap, pid).detach();
    ++h.running;
  } catch (...) {
    // No thread to be had (at exit, or out of resources): the helper runs unreaped (a zombie
    // until this process ends).
  }
  return true;
}

// The recorded inputs as an anonymous file (any size, nothing left on disk), -1 when none can be made.
int record_file(const std::string& record) {
  const int fd = ::memfd_create("jitcache-inputs", MFD_CLOEXEC);
  if (fd < 0) return -1;
  for (std::size_t written = 0; written < record.size();) {
    const ssize_t n = ::write(fd, record.data() + written, record.size() - written);
    if (n <= 0 && errno != EINTR) {
      ::close(fd);
      return -1;
    }
    if (n > 0) written += static_cast<std::size_t>(n);
  }
  return fd;
}

// One job as the helper reads it (capture/helper_process.cpp):
// INPUTS:DEVICE_DIGEST:KEY:HAS_LOCK, with the recorded inputs' file, the marker's descriptor and,
// when HAS_LOCK is 1, the build lock's after them.
bool send_job(int socket, CaptureJob& job, int record) {
  const bool has_lock = job.lock.held();
  const std::string text = job.inputs + ":" + job.device_digest + ":" + job.key.hex() + ":" + (has_lock ? "1" : "0");
  std::vector<int> files = {record, static_cast<int>(job.mark.native_handle())};
  if (has_lock) files.push_back(static_cast<int>(job.lock.native_handle()));
  if (!send_with_files(socket, text, files)) return false;
  job.mark.let_go();  // the helper holds them now (they were in flight until it took them)
  job.lock.let_go();
  count("capture_helper_started");
  return true;
}

// Sends `job` to the running helper, starting one when none runs or the last one stopped reading.
pid_t hand_over_locked(CaptureJob& job, unsigned time_limit_s, std::string* why) {
  Helpers& h = helpers();
  const int record = record_file(job.record);
  if (record < 0) {
    *why = std::string("cannot pass the recorded inputs to the capture helper: ") + std::strerror(errno);
    return -1;
  }
  pid_t pid = -1;
  for (int attempt = 0; attempt < 2 && pid < 0; ++attempt) {
    if (h.socket < 0 && !spawn_locked(time_limit_s, why)) break;
    if (send_job(h.socket, job, record)) {
      pid = h.pid;
    } else {
      ::close(h.socket);  // it died, or was killed: the next one takes the job
      h.socket = -1;
      *why = "the capture helper stopped taking jobs";
    }
  }
  ::close(record);
  return pid;
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A helper counts what its programs did; one that was killed itself could not.
  if (WIFSIGNALED(status)) {
    count("capture_helper_died");
    log_info("capture helper " + std::to_string(pid) + " died with signal " + std::to_string(WTERMSIG(status)) +
             ": its entries are built again by the next run");
  }
  std::lock_guard lock(helpers().mutex);
  Helpers& h = helpers();
  if (h.pid == pid && h.socket >= 0) {
    ::close(h.socket);
    h.socket = -1;
  }
  --h.running;
  h.ended.notify_all();
}

// Once per process: JITCACHE_HELPER, else the first candidate next to the shim that exists. Either
// must pass the trust rule for code (store/files/trusted_file.hpp): a build tree under /tmp would make
// `<libdir>/../../bin/jitcache` a name any local user can create, run as this user on every miss.
// A refusal is the one warning; no helper is then used (auto captures in the app).
std::string find_helper_binary() {
  std::vector<std::filesystem::path> candidates;
  if (const char* set = std::getenv("JITCACHE_HELPER"); set && *set) {
    candidates.emplace_back(set);
  } else {
    Dl_info info{};
    if (!::dladdr(reinterpret_cast<void*>(&find_helper_binary), &info) || !info.dli_fname) return {};
    const std::filesystem::path library_dir = std::filesystem::path(info.dli_fname).parent_path();
    // <prefix>/lib/jitcache, <prefix>/lib/<multiarch>/jitcache (the Debian package), the build tree.
    for (const auto& candidate : {library_dir / ".." / ".." / "bin" / "jitcache", library_dir / ".." / "bin" / "jitcache",
                                  library_dir / ".." / "tools" / "jitcache",
                                  library_dir / ".." / ".." / ".." / "bin" / "jitcache"}) {
      std::error_code error;
      if (std::filesystem::exists(candidate, error)) candidates.push_back(candidate.lexically_normal());
    }
  }
  // Each refused candidate with its own reason: the one the user meant may not be the first.
  std::string refusals;
  for (const std::filesystem::path& candidate : candidates) {
    std::string why;
    std::optional<std::filesystem::path> trusted = resolve_trusted_file(candidate, &why);
    if (trusted && ::access(trusted->c_str(), X_OK) == 0) return trusted->string();
    refusals += (refusals.empty() ? "" : "; ") + (trusted ? candidate.string() + " is not executable" : why);
  }
  if (!refusals.empty()) {
    log_warning("capture helper refused: " + refusals + "; builds are captured in the app, or not at all "
                "with capture = helper (docs/reliability.md, \"Trust model\")");
  }
  return {};
}

}  // namespace

std::string helper_binary() {
  // Never destroyed: the exit flush starts helpers after static destructors may have run.
  static const std::string* binary = new std::string(find_helper_binary());
  return *binary;
}

pid_t submit_capture(CaptureJob job, const HelperPolicy& policy, std::string* why) {
  std::lock_guard lock(helpers().mutex);
  helpers().time_limit_s = policy.time_limit_s;
  if (!policy.while_running && !helpers().exiting) {
    job.lock.release();  // not started before the exit: nobody's to wait for
    count("capture_helper_queued");
    helpers().kept.push_back(std::move(job));
    return 0;
  }
  return hand_over_locked(job, policy.time_limit_s, why);
}

void prestart_capture_helper(const std::string& device_digest, const HelperPolicy& policy) {
  std::lock_guard lock(helpers().mutex);
  Helpers& h = helpers();
  if (h.prestarted || h.exiting || !policy.while_running || h.socket >= 0) return;
  h.prestarted = true;  // once: a helper that died is restarted by the next hand-over, not here
  h.time_limit_s = policy.time_limit_s;
  std::string why;
  if (!spawn_locked(policy.time_limit_s, &why)) return;  // the hand-over says why, if one comes
  if (!send_with_files(h.socket, "warm:" + device_digest, {})) {
    ::close(h.socket);
    h.socket = -1;
  }
}

void finish_captures_at_exit(DiskStore& store) {
  std::lock_guard lock(helpers().mutex);
  Helpers& h = helpers();
  h.exiting = true;
  if (!h.kept.empty()) count("capture_helper_at_exit", static_cast<std::int64_t>(h.kept.size()));
  for (CaptureJob& job : h.kept) {
    std::string why;
    if (hand_over_locked(job, h.time_limit_s, &why) < 0) {
      count("capture_helper_not_started");
      log_info("not stored: " + why);
    }
  }
  h.kept.clear();
  // The helper writes its counts after its last key, maybe after this process has gone: it holds
  // this marker until it ends, so that a wait (`jitcache wait`) covers those writes too.
  KeyLock ending;
  if (h.socket >= 0 && !store.mark_helper_ending(&ending) &&
      send_with_files(h.socket, "ending", {static_cast<int>(ending.native_handle())})) {
    ending.let_go();
  }
  if (h.socket >= 0) ::close(h.socket);  // no more jobs: the helper finishes those it has
  h.socket = -1;
}

void forget_captures_after_fork() {
  // In the child of fork(): the old state's mutex may be held by a thread that does not exist
  // here, so it is left alone (leaked) and the child starts afresh with no helper.
  Helpers* parents = helpers_slot();
  if (parents->socket >= 0) ::close(parents->socket);
  for (CaptureJob& job : parents->kept) {
    job.mark.let_go();  // the parent's copies keep them held
    job.lock.let_go();
  }
  helpers_slot() = new Helpers;
}

void wait_for_capture_helpers() {
  std::unique_lock lock(helpers().mutex);
  helpers().ended.wait(lock, [] { return helpers().running == 0; });
}

}  // namespace jitcache
