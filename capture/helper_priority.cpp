#include "capture/helper_priority.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace jitcache {
namespace {

// The scheduling group is the session's: only a helper that leads its own session (the app starts
// it with setsid) may move it. Started any other way (by hand, by a test, from a script), the group
// is its caller's, and nice 19 there would hold back the caller's shell and everything it runs
// for the rest of the session: the process's own nice is all it takes then.
bool set_group_nice(const char* value) {
  if (::getsid(0) != ::getpid()) return false;
  const int autogroup = ::open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
  if (autogroup < 0) return false;  // no autogroups here: the process's nice alone decides
  const bool set = ::write(autogroup, value, std::strlen(value)) > 0;
  ::close(autogroup);
  return set;
}

// Where autogroups do not apply (a cgroup of its own: a container, a service, a batch job; Linux
// weighs autogroups in the root cgroup only), nice values alone count, and the helper's 10 keeps it
// behind everything, even what someone waits for. Coming back from 10 takes a privilege (root,
// CAP_SYS_NICE, an RLIMIT_NICE that allows it): a helper that has it moves the processes of its
// session (itself, its worker, their threads and children) along with the group, back to its app's
// nice, never ahead of it. Without the privilege the call fails and nothing changes. Only for a
// helper that leads its session, as above.
int apps_nice = 0;  // the app's, inherited: this process's nice before run_behind_the_app

bool set_processes_nice(bool full) {
  if (::getsid(0) != ::getpid()) return false;
  return ::setpriority(PRIO_PGRP, 0, full ? apps_nice : std::min(apps_nice + 10, 19)) == 0;
}

}  // namespace

void run_behind_the_app() {
  apps_nice = ::getpriority(PRIO_PROCESS, 0);
  (void)::nice(10);
  set_group_nice("19");
}

void build_at_full_priority(bool full) {
  static bool group_boosted = false;
  static bool processes_boosted = false;
  if (full != group_boosted && set_group_nice(full ? "0" : "19")) group_boosted = full;
  if (full != processes_boosted && set_processes_nice(full)) processes_boosted = full;
}

int group_nice() {
  // "/autogroup-123 nice 19\n"
  const int autogroup = ::open("/proc/self/autogroup", O_RDONLY | O_CLOEXEC);
  if (autogroup < 0) return -1;
  char text[64] = {};
  const ssize_t got = ::read(autogroup, text, sizeof text - 1);
  ::close(autogroup);
  const char* nice = got > 0 ? std::strstr(text, " nice ") : nullptr;
  return nice ? std::atoi(nice + 6) : -1;
}

}  // namespace jitcache
