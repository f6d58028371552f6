// Runs `jitcache replay` jobs as child processes, at most N at a time: a driver that crashes or
// hangs while rebuilding one program costs that job only. Each child reports one JSON object on a
// pipe of its own (its stdout and stderr stay free for the driver); a child that dies without one
// is reported with how it died. POSIX only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace jitcache {

struct ReplayJob {
  std::vector<std::string> arguments;  // after `jitcache replay`
  nlohmann::json context;              // handed back with the result
};

// Calls `done(job, result)` as each job ends (in the order they end). `result` is the child's JSON
// object, or {"outcome": "failed", "reason": "..."} when it reported none.
void run_replay_jobs(const std::vector<ReplayJob>& jobs, unsigned parallel, bool quiet_children,
                     const std::function<void(const ReplayJob&, const nlohmann::json&)>& done);

// The fd number the child writes its result to (`jitcache replay --result-fd`).
inline constexpr int kReplayResultFd = 3;

}  // namespace jitcache
