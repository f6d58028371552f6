// Logging from inside someone else's process: quiet by default. Without JITCACHE_LOG only the
// first warning of the process reaches stderr; with it, every message at or above its level.
#pragma once

#include <string>

namespace jitcache {

void set_log_level(int level);  // see Settings::log_level
void log_warning(const std::string& message);
void log_info(const std::string& message);
void log_debug(const std::string& message);

}  // namespace jitcache
