#include "core/stats.hpp"

#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hashing/bounded_json.hpp"
#include "store/file_ops.hpp"

namespace jitcache {
namespace {

std::mutex g_mutex;
CounterMap g_pending;

std::filesystem::path stats_file(const std::filesystem::path& root) { return root / "stats.json"; }

// An exclusive lock on <root>/stats.lock (the store's portable FileLock). The holder only
// reads and rewrites one small file, so a long wait means a stuck holder: give up after it.
class StatsLock {
 public:
  explicit StatsLock(const std::filesystem::path& root) {
    fileops::FileLock::acquire(root / "stats.lock", std::chrono::seconds(10), &lock_);
  }
  bool held() const { return lock_.held(); }

 private:
  fileops::FileLock lock_;
};

CounterMap parse(const std::filesystem::path& file) {
  CounterMap counters;
  fileops::File opened;
  std::string text;
  if (fileops::File::open_read(file, &opened) || opened.read_all(&text, kMaxJsonBytes)) return counters;
  nlohmann::json json = parse_untrusted_json(text);
  if (!json.is_object()) return counters;
  for (const auto& [name, value] : json.items()) {
    if (value.is_number_integer()) counters[name] = value.get<std::int64_t>();
  }
  return counters;
}

bool write_atomically(const std::filesystem::path& file, const CounterMap& counters) {
  std::filesystem::path tmp = file;
  tmp += ".tmp." + std::to_string(fileops::current_process_id());
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
