#include "core/stats.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

namespace jitcache {
namespace {

std::mutex g_mutex;
CounterMap g_pending;

std::filesystem::path stats_file(const std::filesystem::path& root) { return root / "stats.json"; }

// Holds an exclusive flock on <root>/stats.lock for its lifetime.
class StatsLock {
 public:
  explicit StatsLock(const std::filesystem::path& root)
      : fd_(::open((root / "stats.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~StatsLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

CounterMap parse(const std::filesystem::path& file) {
  CounterMap counters;
  std::ifstream in(file);
  if (!in) return counters;
  nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  if (!json.is_object()) return counters;
  for (const auto& [name, value] : json.items()) {
    if (value.is_number_integer()) counters[name] = value.get<std::int64_t>();
  }
  return counters;
}

bool write_atomically(const std::filesystem::path& file, const CounterMap& counters) {
  std::filesystem::path tmp = file;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << nlohmann::json(counters).dump(2) << '\n';
    if (!out) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  return !ec;
}

}  // namespace

void count(const std::string& name, std::int64_t amount) {
  std::lock_guard lock(g_mutex);
  g_pending[name] += amount;
}

bool flush_stats(const std::filesystem::path& root) {
  CounterMap pending;
  {
    std::lock_guard lock(g_mutex);
    pending.swap(g_pending);
  }
  if (pending.empty()) return true;
  StatsLock file_lock(root);
  bool written = false;
  if (file_lock.held()) {
    CounterMap totals = parse(stats_file(root));
    for (const auto& [name, amount] : pending) totals[name] += amount;
    written = write_atomically(stats_file(root), totals);
  }
  if (!written) {  // keep the counts for the next flush
    std::lock_guard lock(g_mutex);
    for (const auto& [name, amount] : pending) g_pending[name] += amount;
  }
  return written;
}

CounterMap read_stats(const std::filesystem::path& root) { return parse(stats_file(root)); }

bool zero_stats(const std::filesystem::path& root) {
  StatsLock file_lock(root);
  return file_lock.held() && write_atomically(stats_file(root), {});
}

}  // namespace jitcache
