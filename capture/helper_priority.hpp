// How much CPU a capture helper takes from other work (docs/decisions/capture.md, "Capture outside
// the app"). Linux shares the CPU between scheduling groups (autogroups: one per session) before
// the processes inside them, and the helper has a session of its own (setsid), so the lever is its
// group's nice value, which an unprivileged process may move both ways between 0 and 19. A helper
// that does not lead its session (started by hand or by a script) leaves the group alone: it is
// its caller's.
#pragma once

namespace jitcache {

// Once, at the helper's start: nice 10 for the process (what counts where autogroups are off; it
// cannot be lowered again) and the lowest priority, 19, for its scheduling group.
void run_behind_the_app();

// At each build's start and every 250 ms while it runs (for a waiter, every 25 ms): the group at 0
// while nobody is left to run behind (no app of its cache runs, or none uses the CPU:
// capture/apps_cpu_use.hpp; the cache should fill, also on a busy machine) or another process
// waits for that program or one queued behind it (its `.wanted` marker: a run with the driver's
// cache off, `jitcache wait`, `pack create`), else back at 19. A helper allowed to lower its nice
// again (root, CAP_SYS_NICE) moves its processes' nice with it, between its app's and 10 above:
// where autogroups do not apply (a cgroup of its own) that is the only lever.
// Best effort: the kernel refuses changes closer than 100 ms apart to unprivileged processes.
void build_at_full_priority(bool full);

// The nice value of this process's scheduling group (/proc/self/autogroup); -1 where there is none.
// For the trace of a helper's build: the priority it was built at.
int group_nice();

}  // namespace jitcache
