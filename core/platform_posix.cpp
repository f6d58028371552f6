#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/platform.hpp"

namespace jitcache::platform {
namespace {

const char* env_or_null(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace

std::filesystem::path default_cache_root() {
  if (const char* xdg = env_or_null("XDG_CACHE_HOME")) return std::filesystem::path(xdg) / "jitcache";
  if (const char* home = env_or_null("HOME")) return std::filesystem::path(home) / ".cache" / "jitcache";
  // No home: a folder of this user's own in /tmp. A shared, predictable /tmp/jitcache could be
  // made first by anyone; the store refuses a root that is not ours, so another user's
  // /tmp/jitcache-<uid> means uncached, never their binaries.
  return std::filesystem::path("/tmp") / ("jitcache-" + std::to_string(::geteuid()));
}

std::string executable_path() {
  char path[4096];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return length > 0 ? std::string(path, static_cast<std::size_t>(length)) : std::string();
}

void set_environment(const std::string& name, const std::string& value) { ::setenv(name.c_str(), value.c_str(), 1); }

std::tm local_time(std::time_t seconds) {
  std::tm local{};
  localtime_r(&seconds, &local);
  return local;
}

void at_fork(void (*prepare)(), void (*parent)(), void (*child)()) { pthread_atfork(prepare, parent, child); }

bool worker_threads_outlive_exit() { return true; }

}  // namespace jitcache::platform
