#include "core/memory_tier.hpp"

namespace jitcache {

MemoryTier::MemoryTier(std::uint64_t max_bytes, std::size_t max_entries)
    : max_bytes_(max_bytes), max_entries_(max_entries) {}

std::optional<MemoryValue> MemoryTier::find(MemoryScope scope, const Digest128& key) {
  std::lock_guard lock(mutex_);
  auto it = index_.find({scope, key});
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->value;
}

void MemoryTier::insert(MemoryScope scope, const Digest128& key, MemoryValue value) {
  std::list<Slot> dropped;
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find({scope, key}); it != index_.end()) {
      bytes_ -= it->second->value.bytes;
      dropped.splice(dropped.end(), lru_, it->second);
      index_.erase(it);
    }
    if (value.bytes <= max_bytes_ && max_entries_ > 0) {
      bytes_ += value.bytes;
      lru_.push_front({scope, key, std::move(value)});
      index_[{scope, key}] = lru_.begin();
    } else {
      dropped.push_back({scope, key, std::move(value)});
    }
    evict_locked(&dropped);
  }
}

void MemoryTier::erase(MemoryScope scope, const Digest128& key) {
  std::list<Slot> dropped;
  std::lock_guard lock(mutex_);
  auto it = index_.find({scope, key});
  if (it == index_.end()) return;
  bytes_ -= it->second->value.bytes;
  dropped.splice(dropped.end(), lru_, it->second);
  index_.erase(it);
  // `dropped` is declared before the lock: it is destroyed after the unlock.
}

void MemoryTier::erase_scope(MemoryScope scope) {
  std::list<Slot> dropped;
  std::lock_guard lock(mutex_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (it->scope == scope) {
      bytes_ -= it->value.bytes;
      index_.erase({it->scope, it->key});
      dropped.splice(dropped.end(), lru_, it);
    }
    it = next;
  }
}

std::uint64_t MemoryTier::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::size_t MemoryTier::entries() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

void MemoryTier::evict_locked(std::list<Slot>* dropped) {
  while (!lru_.empty() && (bytes_ > max_bytes_ || lru_.size() > max_entries_)) {
    auto oldest = std::prev(lru_.end());
    bytes_ -= oldest->value.bytes;
    index_.erase({oldest->scope, oldest->key});
    dropped->splice(dropped->end(), lru_, oldest);
  }
}

}  // namespace jitcache
