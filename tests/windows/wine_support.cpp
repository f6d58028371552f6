#include "wine_support.hpp"

namespace jitcache::testing {

namespace {
constexpr const char* kWineTimeout = "180";
}

RunResult wine(std::vector<std::string> argv, const std::map<std::string, std::string>& env) {
  argv.insert(argv.begin(), {TIMEOUT_COMMAND, "-k", "10", kWineTimeout, WINE64});
  RunOptions options;
  options.env = {{"WINEPREFIX", WINE_PREFIX},
                 {"WINEDEBUG", "-all"},
                 {"WINEDLLOVERRIDES", "mscoree,mshtml="},  // no Mono/Gecko install prompts
                 {"POCL_KERNEL_CACHE", "0"}};
  for (const auto& [name, value] : env) options.env[name] = value;
  options.unset = {"LD_PRELOAD",         "JITCACHE_DIR",      "JITCACHE_TRACE", "JITCACHE_TRACE_DIR",
                   "JITCACHE_DISABLE",   "JITCACHE_READ_ONLY", "JITCACHE_LOG",  "JITCACHE_DLL"};
  options.timeout_s = 240;
  return run(argv, options);
}

std::vector<std::string> example(const char* exe) { return {exe, "--kernels", EXAMPLE_KERNELS}; }

}  // namespace jitcache::testing
