// jitcache run [options] [--] app args...: runs the app with the cache injected. The tool execs
// the app, so the app's exit status and any signal it gets or dies of are its own.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "tools/commands/command.hpp"
#include "shim/linux/injection_choice.hpp"
#include "tools/lib/injection.hpp"

namespace jitcache::tool {
namespace {

struct RunOptions {
  std::string dir;
  bool trace = false;
  std::string trace_dir;
  bool read_only = false;
  bool disable = false;
  std::string log;
};

// Exit codes of the tool's own failures, as env(1) and timeout(1) use them.
constexpr int kToolFailure = 125;
constexpr int kCannotExecute = 126;
constexpr int kNotFound = 127;

int run_app(const RunOptions& options, std::vector<std::string> argv) {
  if (argv.empty()) return report_error("run: no command given: jitcache run [options] [--] app args...", 2);
  if (!options.dir.empty()) ::setenv("JITCACHE_DIR", options.dir.c_str(), 1);
  if (options.trace) ::setenv("JITCACHE_TRACE", "1", 1);
  if (!options.trace_dir.empty()) ::setenv("JITCACHE_TRACE_DIR", options.trace_dir.c_str(), 1);
  if (options.read_only) ::setenv("JITCACHE_READ_ONLY", "1", 1);
  if (options.disable) ::setenv("JITCACHE_DISABLE", "1", 1);
  if (!options.log.empty()) ::setenv("JITCACHE_LOG", options.log.c_str(), 1);

  LibraryLookup library = find_shim_library(tool_directory());
  if (!library.found) return report_error("run: " + library.error, kToolFailure);
  InjectionPlan plan =
      plan_injection(*library.found, std::getenv("LD_PRELOAD"), std::getenv("OPENCL_LAYERS"), jitcache::find_opencl_loader());
  if (options.log == "info" || options.log == "debug") std::fprintf(stderr, "jitcache: %s\n", plan.reason.c_str());
  for (const auto& [name, value] : plan.env) ::setenv(name.c_str(), value.c_str(), 1);

  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  const int error = errno;
  report_error("run: cannot execute " + argv[0] + ": " + std::strerror(error));
  return error == ENOENT ? kNotFound : kCannotExecute;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cli = app.add_subcommand("run", "run an app with the cache injected (exit status and signals pass through)");
  cli->add_option("--dir", options->dir, "cache directory (JITCACHE_DIR)");
  cli->add_flag("--trace", options->trace, "write a BinaryCacheTrace per lookup (JITCACHE_TRACE=1)");
  cli->add_option("--trace-dir", options->trace_dir, "where traces go (JITCACHE_TRACE_DIR)");
  cli->add_flag("--read-only", options->read_only, "serve hits, store nothing (JITCACHE_READ_ONLY=1)");
  cli->add_flag("--disable", options->disable, "run without the cache (JITCACHE_DISABLE=1)");
  cli->add_option("--log", options->log, "warn, info or debug (JITCACHE_LOG)");
  // Everything from the app's name on belongs to the app: CLI11 hands it to the parent, whose
  // prefix_command() keeps it unparsed (main.cpp).
  cli->prefix_command();
  cli->footer("The app and its arguments follow the options, optionally after `--`.");
  return {cli, [&app, options] {
            std::vector<std::string> argv = app.remaining();
            if (!argv.empty() && argv.front() == "--") argv.erase(argv.begin());
            return run_app(*options, std::move(argv));
          }};
}

}  // namespace jitcache::tool
