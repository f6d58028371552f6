#include "core/stats.hpp"

#include <mutex>

#include <nlohmann/json.hpp>

#include "core/long_wait.hpp"
#include "store/files/file_ops.hpp"
#include "store/files/json_file.hpp"

namespace jitcache {
namespace {

std::mutex g_counts_mutex;
CounterMap g_pending_counts;

std::filesystem::path stats_file(const std::filesystem::path& root) { return root / "stats.json"; }

// An exclusive lock on <root>/stats.lock (the store's portable FileLock). The holder only
// reads and rewrites one small file, so a long wait means a stuck holder: give up after `wait`.
class StatsLock {
 public:
  StatsLock(const std::filesystem::path& root, std::chrono::milliseconds wait) {
    const WaitNotice notice{WaitKind::stats_lock, "the lock of " + (root / "stats.lock").string(),
                            "JITCACHE_FLUSH_TIMEOUT_MS"};
    wait_announced(notice, wait, [&](std::chrono::milliseconds bound) {
      std::error_code error = fileops::FileLock::acquire(root / "stats.lock", bound, &lock_);
      return error != std::errc::resource_unavailable_try_again;
    });
  }
  bool held() const { return lock_.held(); }

 private:
  fileops::FileLock lock_;
};

// Far above any real counter file; a bigger one (or a FIFO, a device) is ignored, never waited on.
constexpr std::uint64_t kMaxStatsBytes = 1 << 20;

CounterMap parse_counters(const std::filesystem::path& file) { return read_integer_members(file, kMaxStatsBytes); }

bool write_atomically(const std::filesystem::path& file, const CounterMap& counters) {
  return write_file_atomically(file, nlohmann::json(counters).dump(2) + "\n");
}

}  // namespace

void count(const std::string& name, std::int64_t amount) {
  std::lock_guard lock(g_counts_mutex);
  g_pending_counts[name] += amount;
}

bool flush_stats(const std::filesystem::path& root, std::chrono::milliseconds wait) {
  CounterMap pending;
  {
    std::lock_guard lock(g_counts_mutex);
    pending.swap(g_pending_counts);
  }
  if (pending.empty()) return true;
  StatsLock file_lock(root, wait);
  bool written = false;
  if (file_lock.held()) {
    CounterMap totals = parse_counters(stats_file(root));
    for (const auto& [name, amount] : pending) totals[name] += amount;
    written = write_atomically(stats_file(root), totals);
  }
  if (!written) {  // keep the counts for the next flush
    std::lock_guard lock(g_counts_mutex);
    for (const auto& [name, amount] : pending) g_pending_counts[name] += amount;
  }
  return written;
}

CounterMap read_stats(const std::filesystem::path& root) { return parse_counters(stats_file(root)); }

bool zero_stats(const std::filesystem::path& root) {
  StatsLock file_lock(root, std::chrono::seconds(10));  // the tool: a person is watching
  return file_lock.held() && write_atomically(stats_file(root), {});
}

}  // namespace jitcache
