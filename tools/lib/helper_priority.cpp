#include "tools/lib/helper_priority.hpp"

#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace jitcache::tool {
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

}  // namespace

void run_behind_the_app() {
  (void)::nice(10);
  set_group_nice("19");
}

void build_for_a_waiter(bool waited_for) {
  static bool boosted = false;
  if (waited_for != boosted && set_group_nice(waited_for ? "0" : "19")) boosted = waited_for;
}

}  // namespace jitcache::tool
