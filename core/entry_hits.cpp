#include "core/entry_hits.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>

#include <nlohmann/json.hpp>

#include "store/files/file_ops.hpp"
#include "store/files/json_file.hpp"

namespace jitcache {
namespace {

constexpr std::chrono::milliseconds kLockWait{2000};
constexpr std::uint64_t kMaxFileBytes = 64ull << 20;

std::mutex g_mutex;
EntryHits g_pending;

std::filesystem::path hits_file(const std::filesystem::path& root) { return root / "entry_hits.json"; }
std::filesystem::path hits_lock(const std::filesystem::path& root) { return root / "entry_hits.lock"; }

EntryHits parse(const std::filesystem::path& root) { return read_integer_members(hits_file(root), kMaxFileBytes); }

bool write(const std::filesystem::path& root, const EntryHits& hits) {
  return write_file_atomically(hits_file(root), nlohmann::json(hits).dump() + "\n");
}

}  // namespace

void count_entry_hit(const std::string& key_hex) {
  std::lock_guard lock(g_mutex);
  g_pending[key_hex] += 1;
}

bool flush_entry_hits(const std::filesystem::path& root, std::chrono::milliseconds wait) {
  EntryHits pending;
  {
    std::lock_guard lock(g_mutex);
    pending.swap(g_pending);
  }
  if (pending.empty()) return true;
  bool written = false;
  fileops::FileLock lock;
  if (!fileops::FileLock::acquire(hits_lock(root), std::min(wait, kLockWait), &lock)) {
    EntryHits totals = parse(root);
    for (const auto& [key, hits] : pending) totals[key] += hits;
    written = write(root, totals);
  }
  if (!written) {
    std::lock_guard relock(g_mutex);
    for (const auto& [key, hits] : pending) g_pending[key] += hits;
  }
  return written;
}

EntryHits read_entry_hits(const std::filesystem::path& root) { return parse(root); }

bool prune_entry_hits(const std::filesystem::path& root, const std::set<std::string>& live) {
  fileops::FileLock lock;
  if (fileops::FileLock::acquire(hits_lock(root), kLockWait, &lock)) return false;
  EntryHits hits = parse(root);
  const std::size_t before = hits.size();
  std::erase_if(hits, [&](const auto& item) { return !live.count(item.first); });
  return hits.size() == before || write(root, hits);
}

}  // namespace jitcache
