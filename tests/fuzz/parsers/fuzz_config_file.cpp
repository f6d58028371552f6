// <root>/jitcache.conf through load_settings(): any bytes give settings (bad values become
// "problems" with the default used), never a crash or an exception.
#include <stdlib.h>

#include "core/settings.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  static const bool environment_ready = [] {
    for (const auto& definition : setting_definitions()) ::unsetenv(definition.env);
    ::setenv("JITCACHE_DIR", fuzz::scratch_dir().c_str(), 1);
    return true;
  }();
  (void)environment_ready;
  fuzz::write_file(fuzz::scratch_dir() / "jitcache.conf", fuzz::as_text(data, size));
  Settings settings = load_settings();
  volatile std::size_t seen = settings.raw.size() + settings.problems.size();
  (void)seen;
  return 0;
}
