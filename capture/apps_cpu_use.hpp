// Whether the apps of a cache are using the CPU now. A capture helper runs behind the
// apps of its cache so that they keep their CPU. One that sits idle while it runs on (a server
// that built at its start, an MPI rank blocked in a collective) needs none, and deferring to it
// starved the helper on a machine busy with other work: the cache did not fill until that app
// exited. The store names the apps (DiskStore::apps_at_work: the holders of their own lock files);
// their CPU time is in /proc/<pid>/stat.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <sys/types.h>

namespace jitcache {

class AppsCpuUse {
 public:
  // Whether one of the apps at work, `apps` (their pids: DiskStore::apps_at_work), used a tenth of
  // a CPU or more since the last look (at least 200 ms before; a shorter span keeps the last
  // answer), or has a thread running or waiting for a CPU now: one starved by other work gets less
  // than a tenth but still wants it. True at once for an app that has appeared since the last look,
  // whenever that was: an app starting builds. With no look before, or none in the last second,
  // whether a thread of one runs or waits for a CPU this instant (a first look must not make the
  // helper wait). Also true where that cannot be told (none named, an app in another pid
  // namespace, no /proc): the helper then defers, as it did to any app at work.
  bool busy(const std::vector<std::int64_t>& apps);
  // No app is at work now (the store said so): one that holds it at a later look started since.
  void none_at_work();

 private:
  struct Sample {
    std::chrono::steady_clock::time_point at;
    std::map<pid_t, std::uint64_t> cpu_ticks;  // per holder: user + system time, in clock ticks
  };
  static std::optional<Sample> take(const std::vector<std::int64_t>& apps);
  bool busy_since_last(const Sample& now) const;
  static bool any_thread_runs(const Sample& now);
  bool started_since_last(const Sample& now) const;

  std::optional<Sample> last_;
  bool busy_ = true;
};

}  // namespace jitcache
