#include "driver_settings.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace jitcache::test_ze {
namespace {

constexpr std::uint32_t kDefaultDriverVersion = 1000;

// A mistyped knob must not silently fall back, or a test could pass for the wrong reason.
void warn_ignored(const char* name, const char* value) {
  std::fprintf(stderr, "jitcache test driver: ignoring %s=\"%s\" (invalid value)\n", name, value);
}

}  // namespace

std::uint32_t driver_version() {
  const char* text = std::getenv("JITCACHE_TEST_ZE_DRIVER_VERSION");
  if (text == nullptr || *text == '\0') return kDefaultDriverVersion;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (errno != 0 || *end != '\0' || value == 0 || value > UINT32_MAX) {
    warn_ignored("JITCACHE_TEST_ZE_DRIVER_VERSION", text);
    return kDefaultDriverVersion;
  }
  return static_cast<std::uint32_t>(value);
}

double compile_cost_scale() {
  const char* text = std::getenv("JITCACHE_TEST_ZE_COMPILE_COST");
  if (text == nullptr || *text == '\0') return 1.0;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (*end != '\0' || !std::isfinite(value) || value < 0) {
    warn_ignored("JITCACHE_TEST_ZE_COMPILE_COST", text);
    return 1.0;
  }
  return value;
}

const char* compile_log_path() {
  const char* path = std::getenv("JITCACHE_TEST_ZE_COMPILE_LOG");
  return (path != nullptr && *path != '\0') ? path : nullptr;
}

}  // namespace jitcache::test_ze
