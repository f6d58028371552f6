// Test helpers shared by the unit and integration tests of how a capture helper finds the apps of
// its cache at work: child processes that stand for apps, and one that holds many locks of no app,
// as any local user may.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <string>

namespace jitcache::testing {

// The first CPU this process may run on: children pinned there put their locks in that CPU's part of
// the kernel's lock table, in the order they take them.
inline int first_cpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) return cpu;
  }
  return -1;
}

// Pins the calling thread, and what it forks or spawns from then on, to `cpu` (none: -1).
inline void pin_to(int cpu) {
  if (cpu < 0) return;
  cpu_set_t only;
  CPU_ZERO(&only);
  CPU_SET(cpu, &only);
  (void)::sched_setaffinity(0, sizeof only, &only);
}

// A child process that runs `body` and then exits. The body calls ready() once it is set up (the
// constructor returns after that, or after the body ended without it), then, if it is to wait,
// wait_for_end(): that returns once the parent calls end(0). The destructor kills it.
class ChildProcess {
 public:
  explicit ChildProcess(const std::function<void(const ChildProcess&)>& body) {
    if (::pipe(told_) != 0 || ::pipe(end_) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(told_[0]);
      ::close(end_[1]);  // a parent that dies ends the wait
      body(*this);
      ::_exit(0);
    }
    ::close(told_[1]);
    told_[1] = -1;
    char byte = 0;
    started_ = ::read(told_[0], &byte, 1) == 1;
  }
  ~ChildProcess() {
    end(SIGKILL);
    for (int fd : {told_[0], told_[1], end_[0], end_[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // In the child.
  void ready() const {
    if (::write(told_[1], "r", 1) != 1) ::_exit(1);
  }
  void wait_for_end() const {
    char byte;
    (void)!::read(end_[0], &byte, 1);
  }
  // In the parent: whether the body said it is ready; its pid; ends it, killed with `signal` (no
  // destructor of the child's runs) or told to (0), and waits for it.
  bool started() const { return started_; }
  pid_t pid() const { return pid_; }
  void end(int signal = 0) {
    if (pid_ <= 0) return;
    if (signal) ::kill(pid_, signal);
    (void)!::write(end_[1], "e", 1);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int told_[2] = {-1, -1}, end_[2] = {-1, -1};
  bool started_ = false;
};

// A child process of no app that holds `locks` POSIX locks (byte ranges of files in `folder`, 1000
// a file, none adjacent, so none merge) and an OFD lock on a file in /dev/shm, as any local user
// may, until it is ended. Pinned to `cpu`, its locks come before those taken there earlier in
// /proc/locks.
inline void hoard_locks(const ChildProcess& child, const std::filesystem::path& folder, int locks, int cpu) {
  pin_to(cpu);
  for (int file = 0; file * 1000 < locks; ++file) {
    const int fd = ::open((folder / ("hoard-" + std::to_string(file))).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    for (int lock = 0; lock < 1000; ++lock) {
      struct flock range {};
      range.l_type = F_WRLCK;
      range.l_whence = SEEK_SET;
      range.l_start = 2 * static_cast<off_t>(lock);
      range.l_len = 1;
      if (::fcntl(fd, F_SETLK, &range) != 0) return;
    }
  }
  const std::string shared = "/dev/shm/jitcache-hoard-" + std::to_string(::getpid());
  const int shm = ::open(shared.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (shm >= 0) {
    ::unlink(shared.c_str());
    struct flock whole {};
    whole.l_type = F_WRLCK;
    whole.l_whence = SEEK_SET;
    (void)::fcntl(shm, F_OFD_SETLK, &whole);
  }
  child.ready();
  child.wait_for_end();
}

}  // namespace jitcache::testing
