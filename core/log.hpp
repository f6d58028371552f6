// Logging from inside someone else's process: quiet by default. Without JITCACHE_LOG only the
// first warning of the process reaches stderr; with it, every message at or above its level.
#pragma once

#include <string>

namespace jitcache {

void set_log_level(int level);  // see Settings::log_level
void log_warning(const std::string& message);
void log_info(const std::string& message);
void log_debug(const std::string& message);
// Always printed, whatever the level, and not counted as the process's one warning: for rare,
// already rate-limited notices the user must see (a long wait: core/long_wait.hpp).
void log_announce(const std::string& message);

}  // namespace jitcache
