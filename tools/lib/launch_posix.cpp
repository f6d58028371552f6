// `jitcache run` on Linux: find libjitcache.so, set LD_PRELOAD (and OPENCL_LAYERS where the ICD
// loader has layers), then exec the app, so its exit status and signals are its own.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/platform.hpp"
#include "shim/linux/injection_choice.hpp"
#include "tools/lib/injection.hpp"
#include "tools/lib/launch.hpp"

namespace jitcache::tool {

std::vector<std::string> utf8_arguments(int argc, char** argv) { return {argv, argv + argc}; }

int run_with_cache(std::vector<std::string> argv, bool verbose) {
  LibraryLookup library = find_shim_library(tool_directory());
  if (!library.found) {
    std::fprintf(stderr, "jitcache: error: run: %s\n", library.error.c_str());
    return kToolFailure;
  }
  InjectionPlan plan = plan_injection(*library.found, std::getenv("LD_PRELOAD"), std::getenv("OPENCL_LAYERS"),
                                      jitcache::find_opencl_loader());
  if (verbose) std::fprintf(stderr, "jitcache: %s\n", plan.reason.c_str());
  for (const auto& [name, value] : plan.env) platform::set_environment(name, value);

  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  const int error = errno;
  std::fprintf(stderr, "jitcache: error: run: cannot execute %s: %s\n", argv[0].c_str(), std::strerror(error));
  return error == ENOENT ? kNotFound : kCannotExecute;
}

}  // namespace jitcache::tool
