#include "tools/lib/helper_priority.hpp"

#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace jitcache::tool {
namespace {

bool set_group_nice(const char* value) {
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
