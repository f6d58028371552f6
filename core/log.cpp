#include "core/log.hpp"

#include <atomic>
#include <cstdio>

namespace jitcache {
namespace {

std::atomic<int> g_level{0};
std::atomic<bool> g_warned{false};

void emit(const char* tag, const std::string& message) {
  std::fprintf(stderr, "jitcache: %s%s\n", tag, message.c_str());
}

}  // namespace

void set_log_level(int level) { g_level.store(level); }

void log_warning(const std::string& message) {
  if (g_level.load() >= 1) {
    emit("warning: ", message);
  } else if (!g_warned.exchange(true)) {
    emit("warning: ", message + " (further warnings hidden; set JITCACHE_LOG=warn to see all)");
  }
}

void log_info(const std::string& message) {
  if (g_level.load() >= 2) emit("", message);
}

void log_announce(const std::string& message) { emit("", message); }

void log_debug(const std::string& message) {
  if (g_level.load() >= 3) emit("debug: ", message);
}

}  // namespace jitcache
