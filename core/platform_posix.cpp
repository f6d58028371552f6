#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

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

std::chrono::microseconds own_cpu_time() {
  rusage self{}, children{};
  if (::getrusage(RUSAGE_SELF, &self) != 0 || ::getrusage(RUSAGE_CHILDREN, &children) != 0) {
    return std::chrono::microseconds(0);
  }
  auto us = [](const timeval& t) { return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec); };
  return us(self.ru_utime) + us(self.ru_stime) + us(children.ru_utime) + us(children.ru_stime);
}

std::optional<std::chrono::microseconds> process_cpu_time(long pid) {
  if (pid <= 0) return std::nullopt;
  char text[1024];
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return std::nullopt;
  // Fields 14-17 (user and system ticks, its own and its reaped children's: a compiler may run a
  // linker), counted from the command name's closing parenthesis (the name may hold any character).
  const std::string_view stat(text, static_cast<std::size_t>(got));
  std::size_t at = stat.rfind(')');
  for (int field = 2; field < 14 && at != std::string_view::npos; ++field) at = stat.find(' ', at + 1);
  if (at == std::string_view::npos) return std::nullopt;
  unsigned long long user = 0, system = 0, children_user = 0, children_system = 0;
  if (std::sscanf(std::string(stat.substr(at)).c_str(), "%llu %llu %llu %llu", &user, &system, &children_user,
                  &children_system) != 4) {
    return std::nullopt;
  }
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  const unsigned long long ticks = user + system + children_user + children_system;
  if (ticks_per_second <= 0 || ticks > (1ull << 40)) return std::nullopt;
  return std::chrono::microseconds(
      static_cast<std::int64_t>(ticks * 1000000ull / static_cast<unsigned long long>(ticks_per_second)));
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
