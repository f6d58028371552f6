// jitcache: the command line tool. Each subcommand lives in commands/<name>.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#ifndef _WIN32
#include "capture/engine_seam.hpp"
#endif
#include "core/absolute_paths.hpp"
#include "core/platform.hpp"
#include "core/tier_source.hpp"
#include "store/tiers/tiers.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/launch.hpp"
#include "tools/lib/version.hpp"

namespace jitcache::tool {

int report_error(const std::string& message, int exit_code) {
  std::fprintf(stderr, "jitcache: error: %s\n", message.c_str());
  return exit_code;
}

void print_json(const nlohmann::json& value) {
  std::cout << value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

}  // namespace jitcache::tool

int main(int argc, char** argv) {
  using namespace jitcache::tool;
  jitcache::link_tiers(jitcache::linked_tiers());  // warm, replay and capture helpers run the engine here
#ifndef _WIN32
  jitcache::link_capture(jitcache::capture_helper_seam());  // and wait for keys other helpers build
#endif
  CLI::App app{"jitcache: a persistent cache for OpenCL and Level Zero JIT compilation.\n"
               "Settings come from the environment (JITCACHE_*), <dir>/jitcache.conf and defaults;\n"
               "`jitcache config` shows them. Docs: docs/cli.md."};
  app.name("jitcache");
  app.set_version_flag("--version", version_text(), "print the version, commit, build type and features, then exit");
  app.require_subcommand(1);
  app.fallthrough();  // `jitcache ls --dir X` works like `jitcache --dir X ls`
  app.prefix_command();  // keeps `jitcache run ... app args` unparsed; other commands refuse leftovers
  std::string dir;
  app.add_option("--dir", dir, "cache directory (overrides JITCACHE_DIR)");

  std::vector<Command> commands = {
      add_run_command(app),    add_stats_command(app), add_ls_command(app),
      add_show_command(app),   add_verify_command(app), add_evict_command(app),
      add_clear_command(app),  add_config_command(app), add_explain_command(app),
      add_doctor_command(app), add_generate_command(app), add_wait_command(app),
#ifndef _WIN32
      add_pack_command(app),
#endif
  };
#ifdef JITCACHE_HAS_WARM  // the OpenCL adapter against the driver: Linux for now
  commands.push_back(add_warm_command(app));
  commands.push_back(add_replay_command(app));
#endif
  // CLI11 parses from the last argument backwards, so it gets a reversed copy (as App::parse(argc, argv)).
  std::vector<std::string> arguments = utf8_arguments(argc, argv);
  arguments.erase(arguments.begin());
  std::reverse(arguments.begin(), arguments.end());
  try {
    app.parse(std::move(arguments));
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!dir.empty()) jitcache::platform::set_environment("JITCACHE_DIR", dir);
  jitcache::make_path_variables_absolute();  // before `run` starts an app that may change directory
  for (const Command& command : commands) {
    if (!command.cli->parsed()) continue;
    if (command.cli->get_name() != "run" && !app.remaining().empty()) {
      return report_error("unexpected argument '" + app.remaining().front() + "' (see jitcache " +
                              command.cli->get_name() + " --help)",
                          2);
    }
    try {
      return command.run();
    } catch (const std::exception& e) {
      return report_error(e.what());
    }
  }
  return report_error("no command given (see jitcache --help)", 2);
}
