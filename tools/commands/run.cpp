// jitcache run [options] [--] app args...: runs the app with the cache injected. On Linux the tool
// execs the app, so the app's exit status and any signal it gets or dies of are its own; on
// Windows it injects jitcache.dll as jitcache-run.exe does and returns the app's exit code
// (tools/lib/launch_*.cpp).
#include <memory>

#include "core/absolute_paths.hpp"
#include "core/platform.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/launch.hpp"

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

// The settings reach the app as the environment variables it reads (it inherits them).
int run_app(const RunOptions& options, std::vector<std::string> argv) {
  if (argv.empty()) return report_error("run: no command given: jitcache run [options] [--] app args...", 2);
  if (!options.dir.empty()) platform::set_environment("JITCACHE_DIR", options.dir);
  if (options.trace) platform::set_environment("JITCACHE_TRACE", "1");
  if (!options.trace_dir.empty()) platform::set_environment("JITCACHE_TRACE_DIR", options.trace_dir);
  if (options.read_only) platform::set_environment("JITCACHE_READ_ONLY", "1");
  if (options.disable) platform::set_environment("JITCACHE_DISABLE", "1");
  if (!options.log.empty()) platform::set_environment("JITCACHE_LOG", options.log);
  make_path_variables_absolute();  // the app may change directory
  return run_with_cache(std::move(argv), options.log == "info" || options.log == "debug");
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
