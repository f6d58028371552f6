#include "tools/lib/helper_priority.hpp"

#include <cstdlib>
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

void build_at_full_priority(bool full) {
  static bool boosted = false;
  if (full != boosted && set_group_nice(full ? "0" : "19")) boosted = full;
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

}  // namespace jitcache::tool
