// How much CPU a capture helper takes from other work (docs/design-decisions.md, "Capture outside
// the app"). Linux shares the CPU between scheduling groups (autogroups: one per session) before
// the processes inside them, and the helper has a session of its own (setsid), so the lever is its
// group's nice value, which an unprivileged process may move both ways between 0 and 19.
#pragma once

namespace jitcache::tool {

// Once, at the helper's start: nice 10 for the process (what counts where autogroups are off; it
// cannot be lowered again) and the lowest priority, 19, for its scheduling group.
void run_behind_the_app();

// Before each build: the group at 0 while another process waits for that program (its `.wanted`
// marker: a run with the driver's cache off, `jitcache wait`, `pack create`), else back at 19.
// Best effort: the kernel refuses changes closer than 100 ms apart to unprivileged processes.
void build_for_a_waiter(bool waited_for);

}  // namespace jitcache::tool
