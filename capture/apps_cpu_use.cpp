#include "capture/apps_cpu_use.hpp"

#include <algorithm>
#include <cerrno>
#include <sstream>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace jitcache {
namespace {

constexpr auto kWindow = std::chrono::milliseconds(200);  // the shortest span a share is taken over
constexpr auto kStale = std::chrono::seconds(1);           // an older look says nothing about now
constexpr double kBusyShare = 0.10;                        // of one CPU

enum class Read { ok, gone, failed };

// A small file of /proc, whole (up to `cap` bytes).
Read read_proc(const std::string& path, std::string* text, std::size_t cap) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ESRCH ? Read::gone : Read::failed;
  text->clear();
  char buffer[4096];
  ssize_t got = 0;
  while (text->size() < cap && (got = ::read(fd, buffer, sizeof buffer)) > 0) text->append(buffer, got);
  const bool failed = got < 0;
  ::close(fd);
  return failed ? Read::failed : Read::ok;
}

// The fields of a /proc stat file from the third on (state, ppid, ...), after the command name's
// closing parenthesis (the name may hold any character).
Read stat_fields(const std::string& path, std::istringstream* fields) {
  std::string text;
  const Read read = read_proc(path, &text, 4096);
  if (read != Read::ok) return read;
  const std::size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return Read::failed;
  fields->str(text.substr(name_end + 1));
  return Read::ok;
}

// User + system time of the whole process (all its threads), in clock ticks: fields 14 and 15.
Read cpu_ticks(pid_t pid, std::uint64_t* ticks) {
  std::istringstream fields;
  if (const Read read = stat_fields("/proc/" + std::to_string(pid) + "/stat", &fields); read != Read::ok) return read;
  std::string skipped;
  for (int field = 3; field < 14; ++field) fields >> skipped;
  std::uint64_t user = 0, system = 0;
  if (!(fields >> user >> system)) return Read::failed;
  *ticks = user + system;
  return Read::ok;
}

// Whether a thread of the process is running or waiting for a CPU now (state R, field 3).
bool a_thread_runs(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (!dir) return false;
  bool runs = false;
  while (const dirent* task = runs ? nullptr : ::readdir(dir)) {
    std::istringstream fields;
    std::string state;
    if (task->d_name[0] != '.' && stat_fields(tasks + "/" + task->d_name + "/stat", &fields) == Read::ok) {
      runs = fields >> state && state == "R";
    }
  }
  ::closedir(dir);
  return runs;
}

}  // namespace

std::optional<AppsCpuUse::Sample> AppsCpuUse::take(const std::vector<std::int64_t>& apps) {
  if (apps.empty()) return std::nullopt;
  Sample sample{std::chrono::steady_clock::now(), {}};
  for (std::int64_t app : apps) {
    if (app <= 0) return std::nullopt;  // its pid cannot be seen from here
    const pid_t pid = static_cast<pid_t>(app);
    std::uint64_t ticks = 0;
    const Read read = cpu_ticks(pid, &ticks);
    if (read == Read::failed) return std::nullopt;
    if (read == Read::ok) sample.cpu_ticks.emplace(pid, ticks);  // one that exited since uses none
  }
  return sample;
}

bool AppsCpuUse::busy_since_last(const Sample& now) const {
  const double seconds = std::chrono::duration<double>(now.at - last_->at).count();
  const double busy_ticks = kBusyShare * seconds * static_cast<double>(::sysconf(_SC_CLK_TCK));
  return std::any_of(now.cpu_ticks.begin(), now.cpu_ticks.end(), [&](const auto& app) {
    return static_cast<double>(app.second - last_->cpu_ticks.at(app.first)) >= busy_ticks;
  });
}

bool AppsCpuUse::any_thread_runs(const Sample& now) {
  return std::any_of(now.cpu_ticks.begin(), now.cpu_ticks.end(), [](const auto& app) { return a_thread_runs(app.first); });
}

bool AppsCpuUse::started_since_last(const Sample& now) const {
  return std::any_of(now.cpu_ticks.begin(), now.cpu_ticks.end(),
                     [&](const auto& app) { return !last_->cpu_ticks.count(app.first); });
}

bool AppsCpuUse::busy(const std::vector<std::int64_t>& apps) {
  std::optional<Sample> now = take(apps);
  if (!now) {
    last_.reset();
    return busy_ = true;
  }
  if (last_ && started_since_last(*now)) {
    // Apps build at their start, and the run started as the one before exits lasts a few hundred
    // ms: busy at once; its CPU time counts from this look on.
    busy_ = true;
  } else if (!last_ || now->at - last_->at > kStale) {
    // No span to measure (the helper must not wait for one): what they do this instant.
    busy_ = any_thread_runs(*now);
  } else if (now->at - last_->at < kWindow) {
    return busy_;  // too short a span to tell: as last time
  } else {
    // Or one that wants the CPU now: on a machine busy with other work an app that spins may get
    // well under a tenth of a CPU, and taken for idle it had the helper beside it at full priority.
    busy_ = busy_since_last(*now) || any_thread_runs(*now);
  }
  last_ = std::move(now);
  return busy_;
}

void AppsCpuUse::none_at_work() {
  last_ = Sample{std::chrono::steady_clock::now(), {}};
  busy_ = false;
}

}  // namespace jitcache
