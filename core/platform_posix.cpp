#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "core/library_check.hpp"
#include "core/platform.hpp"
#include "store/tiers/tiers.hpp"

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

const TierFactory* load_tier_plugin(std::string* why) {
  // The folder the loader found this library in ($ORIGIN: made absolute at load time, so a later
  // chdir or a relative LD_PRELOAD path does not matter).
  Dl_info info;
  link_map* self = nullptr;
  char origin[PATH_MAX] = {};
  if (!::dladdr1(reinterpret_cast<void*>(&load_tier_plugin), &info, reinterpret_cast<void**>(&self),
                 RTLD_DL_LINKMAP) || !self || ::dlinfo(self, RTLD_DI_ORIGIN, origin) != 0) {
    *why = "cannot tell which folder jitcache's library was loaded from";
    return nullptr;
  }
  const std::string path = std::string(origin) + "/" + kTierPluginFile;
  // Checked first: dlopen of a file others may write, or of a truncated one, is past recovery.
  const std::optional<std::filesystem::path> checked = check_loadable_library(path, why);
  if (!checked) return nullptr;
  void* plugin = ::dlopen(checked->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    const char* error = ::dlerror();
    *why = error ? error : path + ": cannot be loaded";
    return nullptr;
  }
  auto entry = reinterpret_cast<TierPluginEntry>(::dlsym(plugin, kTierPluginEntry));
  const TierFactory* factory = entry ? entry(kTierAbi) : nullptr;
  if (!factory || factory->abi != kTierAbi || factory->layout != kTierLayout) {
    ::dlclose(plugin);
    *why = path + " is not from this build of jitcache";
    return nullptr;
  }
  return factory;
}

}  // namespace jitcache::platform
