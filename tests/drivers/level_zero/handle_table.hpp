// Maps the opaque handles the driver hands out back to its objects. Unknown or already destroyed
// handles are refused instead of dereferenced, so a caller's handle bug fails a test cleanly.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>

namespace jitcache::test_ze {

template <typename Object, typename Handle>
class HandleTable {
 public:
  Handle add(std::shared_ptr<Object> object) {
    const Handle handle = reinterpret_cast<Handle>(object.get());
    std::lock_guard lock(mutex_);
    objects_.emplace(handle, std::move(object));
    return handle;
  }

  // The returned reference keeps the object alive for the rest of the call.
  std::shared_ptr<Object> find(Handle handle) const {
    std::lock_guard lock(mutex_);
    auto found = objects_.find(handle);
    return found == objects_.end() ? nullptr : found->second;
  }

  std::shared_ptr<Object> remove(Handle handle) {
    std::lock_guard lock(mutex_);
    auto found = objects_.find(handle);
    if (found == objects_.end()) return nullptr;
    auto object = std::move(found->second);
    objects_.erase(found);
    return object;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<Handle, std::shared_ptr<Object>> objects_;
};

}  // namespace jitcache::test_ze
