#include "capture/replay_jobs.hpp"

#include <map>
#include <memory>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/replay_scratch.hpp"
#include "core/platform.hpp"
#include "hashing/bounded_json.hpp"

extern char** environ;

namespace jitcache {
namespace {

struct Running {
  const ReplayJob* job = nullptr;
  int result_fd = -1;
  std::string output;
  std::shared_ptr<ReplayScratch> scratch;  // the child's PoCL scratch folder, removed once it is reaped
};

nlohmann::json failed(std::string reason) { return {{"outcome", "failed"}, {"reason", std::move(reason)}}; }

// Starts one child; its pid, or -1 with the result pipe closed.
pid_t start(const ReplayJob& job, bool quiet, const ReplayScratch& scratch, int* result_fd) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  std::vector<std::string> arguments = {platform::executable_path(), "replay", "--result-fd",
                                        std::to_string(kReplayResultFd)};
  if (!scratch.path().empty()) arguments.insert(arguments.end(), {"--scratch", scratch.path().string()});
  arguments.insert(arguments.end(), job.arguments.begin(), job.arguments.end());
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], kReplayResultFd);  // dup2 clears CLOEXEC
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = -1;
  int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (error != 0) {
    ::close(pipe_fds[0]);
    return -1;
  }
  *result_fd = pipe_fds[0];
  return pid;
}

std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    return signal == SIGALRM ? "the replay ran past its time limit and was stopped"
                             : "the replay died with signal " + std::to_string(signal);
  }
  return "the replay exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
}

}  // namespace

void run_replay_jobs(const std::vector<ReplayJob>& jobs, unsigned parallel, bool quiet_children,
                     const std::function<void(const ReplayJob&, const nlohmann::json&)>& done) {
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  if (parallel == 0) parallel = 1;
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && running.size() < parallel) {
      const ReplayJob& job = jobs[next++];
      int fd = -1;
      auto scratch = std::make_shared<ReplayScratch>();
      pid_t pid = start(job, quiet_children, *scratch, &fd);
      if (pid < 0) {
        done(job, failed("cannot start `jitcache replay`"));
        continue;
      }
      running[pid] = {&job, fd, {}, std::move(scratch)};
    }
    if (running.empty()) continue;
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      for (auto& [unused, run] : running) {
        ::close(run.result_fd);
        done(*run.job, failed("lost track of the replay process"));
      }
      return;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    // The child is gone: its result (a few hundred bytes) is all in the pipe.
    char buffer[4096];
    for (ssize_t n; (n = ::read(it->second.result_fd, buffer, sizeof buffer)) > 0;) {
      if (it->second.output.size() < (1u << 20)) it->second.output.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(it->second.result_fd);
    nlohmann::json result = parse_untrusted_json(it->second.output);
    if (result.is_discarded() || !result.is_object() || !result.contains("outcome")) result = failed(how_it_ended(status));
    const ReplayJob* job = it->second.job;
    running.erase(it);
    done(*job, result);
  }
}

}  // namespace jitcache
