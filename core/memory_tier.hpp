// The in-process memory tier: per scope (an API context), key -> what the adapter needs to serve
// the build again without the driver: a built program object (OpenCL: the shadow program) and/or
// the binary bytes (Level Zero: the native binary). LRU, bounded by bytes and by entry count.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"

namespace jitcache {

// An opaque adapter handle naming where a built object is valid (cl_context, ze_context_handle_t).
using MemoryScope = std::uintptr_t;
inline constexpr MemoryScope kNoMemoryScope = 0;

struct MemoryValue {
  // The adapter's object; its deleter releases it (e.g. clReleaseProgram) when the tier drops the
  // entry and no lookup holds it any more. May be empty when only the bytes are kept.
  std::shared_ptr<void> object;
  std::shared_ptr<const std::string> binary;  // may be empty when the object is enough
  std::uint64_t bytes = 0;                    // what the entry costs against the budget
  std::uint64_t compile_us = 0;               // the real build's time, for time_saved
  // What the adapter recorded about the real build (the sidecar's "answers", as JSON text), for
  // hits served from here; null: none. Opaque to the engine.
  std::shared_ptr<const std::string> answers;
};

class MemoryTier {
 public:
  MemoryTier(std::uint64_t max_bytes, std::size_t max_entries);

  // A hit makes the entry the most recently used one.
  std::optional<MemoryValue> find(MemoryScope scope, const Digest128& key);
  // Replaces any entry of the same scope and key, then evicts least recently used entries until
  // both limits hold. A value larger than the whole budget is not kept.
  void insert(MemoryScope scope, const Digest128& key, MemoryValue value);
  void erase(MemoryScope scope, const Digest128& key);
  void erase_scope(MemoryScope scope);

  std::uint64_t bytes() const;
  std::size_t entries() const;

 private:
  struct Slot {
    MemoryScope scope;
    Digest128 key;
    MemoryValue value;
  };
  struct SlotKey {
    MemoryScope scope;
    Digest128 key;
    friend bool operator==(const SlotKey&, const SlotKey&) = default;
  };
  struct SlotHash {
    std::size_t operator()(const SlotKey& k) const { return static_cast<std::size_t>(k.key.low ^ (k.scope * 0x9e3779b97f4a7c15ull)); }
  };

  // Moves the slots over the limits into `dropped`; the caller destroys them after unlocking, so
  // that an adapter's deleter never runs under the tier's lock.
  void evict_locked(std::list<Slot>* dropped);

  const std::uint64_t max_bytes_;
  const std::size_t max_entries_;
  mutable std::mutex mutex_;
  std::list<Slot> lru_;  // front: most recently used
  std::unordered_map<SlotKey, std::list<Slot>::iterator, SlotHash> index_;
  std::uint64_t bytes_ = 0;
};

}  // namespace jitcache
