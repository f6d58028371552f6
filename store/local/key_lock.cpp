// Per-key build locks: <root>/locks/<key>.lock, flock'ed by the process that builds the key.
//
// The holder removes the file when it releases, so locks do not pile up. A waiter that opened the
// file before it was removed would otherwise lock a dead inode while a newcomer locks a new file
// under the same name; so after locking, a waiter checks that the name still leads to the inode
// it holds, and starts over when it does not.
#include "store/local/disk_store.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/files/file_ops.hpp"
#include "store/local/disk_store_impl.hpp"

namespace jitcache {
namespace {

// A capture marker's text: "build_us <N>\n" (what the app's own build of the key took), then once
// the helper builds it "started_ns <wall clock>\n" and, where it could tell, its worker's
// "worker_pid <pid>\n" and "worker_cpu_us <the worker's CPU time then>\n".
constexpr std::string_view kCaptureBuildTime = "build_us ";
constexpr std::string_view kCaptureStarted = "started_ns ";
constexpr std::string_view kCaptureWorkerPid = "worker_pid ";
constexpr std::string_view kCaptureWorkerCpu = "worker_cpu_us ";
constexpr std::int64_t kMaxCaptureBuildTimeUs = 24ll * 3600 * 1000 * 1000;  // more is no build time
constexpr std::int64_t kMaxWorkerPid = 1 << 22;                              // Linux's PID_MAX_LIMIT
constexpr std::int64_t kMaxWorkerCpuUs = 1000ll * 3600 * 1000 * 1000;
constexpr std::uint64_t kMaxMarker = 128;

std::string capture_marker_text(std::int64_t build_us, std::optional<std::int64_t> started_ns,
                                const std::optional<DiskStore::CaptureWorker>& worker = std::nullopt) {
  std::string text = std::string(kCaptureBuildTime) + std::to_string(build_us) + "\n";
  if (started_ns) text += std::string(kCaptureStarted) + std::to_string(*started_ns) + "\n";
  if (started_ns && worker && worker->pid > 0 && worker->pid <= kMaxWorkerPid && worker->cpu.count() >= 0 &&
      worker->cpu.count() <= kMaxWorkerCpuUs) {
    text += std::string(kCaptureWorkerPid) + std::to_string(worker->pid) + "\n";
    text += std::string(kCaptureWorkerCpu) + std::to_string(worker->cpu.count()) + "\n";
  }
  return text;
}

// The number after `name` at the start of a line of `text`, if it is one in [0, max].
std::optional<std::int64_t> marker_number(std::string_view text, std::string_view name, std::int64_t max) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.substr(0, name.size()) == name) {
      std::int64_t value = -1;
      const auto [stop, error] = std::from_chars(line.data() + name.size(), line.data() + line.size(), value);
      if (error != std::errc() || stop != line.data() + line.size() || value < 0 || value > max) return std::nullopt;
      return value;
    }
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

struct KeyLock::State {
  std::shared_ptr<const fileops::Dir> root;  // the store's root, kept open while the lock lives
  std::filesystem::path path;
  std::filesystem::path wanted_path;  // the waiters' marker, served once this lock is released
  fileops::FileLock lock;
  bool owns_name = true;  // releasing removes the lock file (and the waiters' marker)
};

KeyLock::KeyLock() = default;
KeyLock::~KeyLock() { release(); }
KeyLock::KeyLock(KeyLock&&) noexcept = default;
KeyLock& KeyLock::operator=(KeyLock&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
  }
  return *this;
}

bool KeyLock::held() const { return state_ && state_->lock.held(); }

void KeyLock::release() {
  if (!state_) return;
  // Removed while still locked: nobody can be holding the name's current inode but us.
  if (state_->lock.held() && state_->owns_name) {
    if (!state_->wanted_path.empty()) (void)state_->root->remove_file(state_->wanted_path);
    (void)state_->root->remove_file(state_->path);
  }
  state_.reset();  // closing the file releases the lock
}

std::intptr_t KeyLock::native_handle() const { return held() ? state_->lock.native_handle() : -1; }

void KeyLock::let_go() {
  if (state_) state_->owns_name = false;
  release();
}

namespace store_detail {

// Locks `path` as above. Shared by lock_key and the sweep of abandoned lock files.
std::error_code lock_current_file(const fileops::Dir& root, const std::filesystem::path& path,
                                  std::chrono::milliseconds wait, fileops::FileLock* out) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    fileops::FileLock lock;
    if (auto error = fileops::FileLock::acquire(root, path, std::max(left, std::chrono::milliseconds(0)), &lock)) {
      return error;
    }
    fileops::FileInfo held, named;
    if (auto error = lock.info(&held)) return error;
    if (auto error = root.stat(path, &named)) return error;
    if (named.kind == fileops::FileKind::regular && named.identity == held.identity) {
      *out = std::move(lock);
      return {};
    }
    // The holder we waited for removed the file: take the name's new file instead.
  }
}

}  // namespace store_detail

bool DiskStore::key_wanted(const Digest128& key) const {
  fileops::FileInfo info;
  if (impl_->layout.dir().stat(impl_->layout.key_wanted(key), &info)) return true;  // unsure: assume so
  return info.kind != fileops::FileKind::missing;
}

void DiskStore::stop_wanting(const Digest128& key) {
  if (!impl_->limits.read_only) (void)impl_->layout.dir().remove_file(impl_->layout.key_wanted(key));
}

std::error_code DiskStore::lock_key(const Digest128& key, std::chrono::milliseconds wait, KeyLock* lock,
                                    Waiter waiter) {
  try {
    lock->release();
    if (impl_->limits.read_only) return std::make_error_code(std::errc::read_only_file_system);
    const auto& layout = impl_->layout;
    if (auto error = layout.dir().make_dir(layout.locks_dir())) return error;
    auto state = std::make_unique<KeyLock::State>();
    state->root = layout.shared_dir();
    state->path = layout.key_lock(key);
    state->wanted_path = layout.key_wanted(key);
    auto error = store_detail::lock_current_file(layout.dir(), state->path, std::chrono::milliseconds(0), &state->lock);
    if (error == std::errc::resource_unavailable_try_again && wait.count() > 0) {
      fileops::File marker;  // best effort: without it the holder may only store later
      if (waiter == Waiter::wants_the_binary) (void)fileops::File::open_or_create(layout.dir(), state->wanted_path, &marker);
      error = store_detail::lock_current_file(layout.dir(), state->path, wait, &state->lock);
    }
    if (error) return error;
    lock->state_ = std::move(state);
    return {};
  } catch (...) {
    return std::make_error_code(std::errc::not_enough_memory);
  }
}

std::error_code DiskStore::adopt_key_lock(const Digest128& key, std::intptr_t handle, bool owns_name, KeyLock* lock) {
  return adopt_lock_file(impl_->layout.key_lock(key), impl_->layout.key_wanted(key), handle, owns_name, lock);
}

std::error_code DiskStore::adopt_capture_mark(const Digest128& key, std::intptr_t handle, KeyLock* mark) {
  return adopt_lock_file(impl_->layout.key_capture(key), {}, handle, /*owns_name=*/true, mark);
}

std::error_code DiskStore::adopt_helper_ending(std::int64_t app_pid, std::intptr_t handle, KeyLock* mark) {
  return adopt_lock_file(impl_->layout.helper_ending(app_pid), {}, handle, /*owns_name=*/true, mark);
}

std::error_code DiskStore::adopt_lock_file(const std::filesystem::path& path, const std::filesystem::path& wanted_path,
                                           std::intptr_t handle, bool owns_name, KeyLock* lock) {
  try {
    lock->release();
    const auto& layout = impl_->layout;
    auto state = std::make_unique<KeyLock::State>();
    state->root = layout.shared_dir();
    state->path = path;
    state->wanted_path = wanted_path;
    state->owns_name = owns_name;
    if (auto error = fileops::FileLock::adopt(handle, &state->lock)) return error;
    // Only the key's current lock file: anything else handed over proves nothing.
    fileops::FileInfo held, named;
    if (auto error = state->lock.info(&held)) return error;
    if (auto error = layout.dir().stat(state->path, &named)) return error;
    if (named.kind != fileops::FileKind::regular || named.identity != held.identity) {
      state->owns_name = false;  // not ours to remove
      return std::make_error_code(std::errc::invalid_argument);
    }
    lock->state_ = std::move(state);
    return {};
  } catch (...) {
    return std::make_error_code(std::errc::not_enough_memory);
  }
}

std::error_code DiskStore::mark_capture(const Digest128& key, std::uint64_t build_us, KeyLock* mark) {
  try {
    mark->release();
    if (impl_->limits.read_only) return std::make_error_code(std::errc::read_only_file_system);
    const auto& layout = impl_->layout;
    if (auto error = layout.dir().make_dir(layout.locks_dir())) return error;
    auto state = std::make_unique<KeyLock::State>();
    state->root = layout.shared_dir();
    state->path = layout.key_capture(key);
    // A moment's wait: a process counting captures holds a free marker briefly before removing it.
    if (auto error = store_detail::lock_current_file(layout.dir(), state->path, std::chrono::milliseconds(20),
                                                     &state->lock)) {
      return error;
    }
    const auto build = static_cast<std::int64_t>(std::min<std::uint64_t>(build_us, kMaxCaptureBuildTimeUs));
    (void)state->lock.replace_contents(capture_marker_text(build, std::nullopt));  // a hint only
    mark->state_ = std::move(state);
    return {};
  } catch (...) {
    return std::make_error_code(std::errc::not_enough_memory);
  }
}

std::error_code DiskStore::mark_helper_ending(KeyLock* mark) {
  try {
    mark->release();
    if (impl_->limits.read_only) return std::make_error_code(std::errc::read_only_file_system);
    const auto& layout = impl_->layout;
    if (auto error = layout.dir().make_dir(layout.locks_dir())) return error;
    auto state = std::make_unique<KeyLock::State>();
    state->root = layout.shared_dir();
    state->path = layout.helper_ending(fileops::current_process_id());
    if (auto error = store_detail::lock_current_file(layout.dir(), state->path, std::chrono::milliseconds(20),
                                                     &state->lock)) {
      return error;
    }
    mark->state_ = std::move(state);
    return {};
  } catch (...) {
    return std::make_error_code(std::errc::not_enough_memory);
  }
}

bool DiskStore::capture_in_flight(const Digest128& key) const {
  const auto& layout = impl_->layout;
  fileops::FileInfo info;
  if (layout.dir().stat(layout.key_capture(key), &info) || info.kind != fileops::FileKind::regular) return false;
  fileops::FileLock lock;  // held by nobody: not in flight (left for the sweep or a wait to remove)
  return store_detail::lock_current_file(layout.dir(), layout.key_capture(key), std::chrono::milliseconds(0), &lock) ==
         std::errc::resource_unavailable_try_again;
}

void DiskStore::mark_capture_started(const Digest128& key, const KeyLock& mark,
                                     const std::optional<CaptureWorker>& worker) {
  const std::optional<std::chrono::microseconds> build = capture_progress(key).build_time;
  if (!mark.held() || !build) return;  // a marker that says nothing keeps saying nothing
  (void)mark.state_->lock.replace_contents(capture_marker_text(build->count(), fileops::now_ns(), worker));
}

DiskStore::CaptureProgress DiskStore::capture_progress(const Digest128& key) const {
  const auto& layout = impl_->layout;
  fileops::File marker;
  std::string text;
  if (fileops::File::open_read(layout.dir(), layout.key_capture(key), &marker, kMaxMarker) ||
      marker.read_all(&text, kMaxMarker)) {
    return {};
  }
  CaptureProgress progress;
  if (auto build = marker_number(text, kCaptureBuildTime, kMaxCaptureBuildTimeUs)) {
    progress.build_time = std::chrono::microseconds(*build);
  }
  progress.started_ns = marker_number(text, kCaptureStarted, INT64_MAX);
  const std::optional<std::int64_t> pid = marker_number(text, kCaptureWorkerPid, kMaxWorkerPid);
  const std::optional<std::int64_t> cpu = marker_number(text, kCaptureWorkerCpu, kMaxWorkerCpuUs);
  if (progress.started_ns && pid && *pid > 0 && cpu) {
    progress.worker = CaptureWorker{static_cast<long>(*pid), std::chrono::microseconds(*cpu)};
  }
  return progress;
}

std::size_t DiskStore::captures_in_flight() const { return capture_keys_in_flight().size(); }

std::vector<Digest128> DiskStore::capture_keys_in_flight() const {
  std::vector<fileops::DirEntry> names;
  std::vector<Digest128> keys;
  if (impl_->layout.dir().list(impl_->layout.locks_dir(), &names)) return keys;
  for (const auto& name : names) {
    const std::filesystem::path marker(name.name);
    if (marker.extension() != ".capture") continue;
    const std::optional<Digest128> key = Digest128::from_hex(marker.stem().string());
    if (key && capture_in_flight(*key)) keys.push_back(*key);
  }
  return keys;
}

std::size_t DiskStore::wait_for_captures(std::chrono::milliseconds wait,
                                         const std::function<void(std::size_t)>& progress) const {
  const auto& layout = impl_->layout;
  std::vector<fileops::DirEntry> names;
  if (layout.dir().list(layout.locks_dir(), &names)) return 0;
  // A settled key's `.wanted` marker goes too, as the key's build lock removes it when let go:
  // under that lock, when nobody holds it. This waiter marks a queued key again just before it
  // waits for it, and a helper may have stored that key (and let its lock go) meanwhile: a
  // marker left then would pin every later helper at full priority.
  const auto unmark_wanted = [&](const std::filesystem::path& marker) {
    const std::filesystem::path build_lock = std::filesystem::path(marker).replace_extension(".lock");
    fileops::FileLock lock;
    if (store_detail::lock_current_file(layout.dir(), build_lock, std::chrono::milliseconds(0), &lock)) return;
    (void)layout.dir().remove_file(std::filesystem::path(marker).replace_extension(".wanted"));
    (void)layout.dir().remove_file(build_lock);
  };
  // A marker nobody holds is settled (or its owner died) and goes, removed while locked here.
  const auto settled = [&](const std::filesystem::path& marker, std::chrono::milliseconds bound) {
    fileops::FileLock lock;
    std::error_code error = store_detail::lock_current_file(layout.dir(), marker, bound, &lock);
    if (!error) {
      (void)layout.dir().remove_file(marker);
      if (marker.extension() == ".capture") unmark_wanted(marker);
    }
    return error != std::errc::resource_unavailable_try_again;
  };
  // A waiter marks what it waits for as wanted, as a process waiting for a build lock does: the
  // capture helper then builds those first and at full priority (capture/helper_priority.hpp).
  // Best effort; the marker goes when the key's build lock is let go, or with the stale lock files.
  const auto mark_wanted = [&](const std::filesystem::path& marker) {
    fileops::File wanted;
    (void)fileops::File::open_or_create(layout.dir(), std::filesystem::path(marker).replace_extension(".wanted"), &wanted);
  };
  std::vector<std::filesystem::path> in_flight;
  std::vector<std::filesystem::path> helpers_ending;  // waited for after the captures, uncounted in `progress`
  for (const auto& name : names) {
    const std::filesystem::path marker = layout.locks_dir() / name.name;
    const bool ending = marker.extension() == ".ending";
    if ((!ending && marker.extension() != ".capture") || settled(marker, std::chrono::milliseconds(0))) continue;
    (ending ? helpers_ending : in_flight).push_back(marker);
    if (!ending && wait.count() > 0) mark_wanted(marker);
  }
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::size_t left_in_flight = 0;
  for (std::size_t i = 0; i < in_flight.size(); ++i) {
    if (progress) progress(in_flight.size() - i + left_in_flight);
    const auto left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
                               std::chrono::milliseconds(0));
    if (left.count() > 0) mark_wanted(in_flight[i]);  // again: letting a queued key's lock go removed it
    if (!settled(in_flight[i], left)) ++left_in_flight;
  }
  for (const std::filesystem::path& marker : helpers_ending) {
    const auto left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
                               std::chrono::milliseconds(0));
    if (!settled(marker, left)) ++left_in_flight;
  }
  return left_in_flight;
}

}  // namespace jitcache
