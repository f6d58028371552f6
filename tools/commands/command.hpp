// What every subcommand file provides: a function that registers the subcommand and its options
// with CLI11 and returns how to run it once parsed. main.cpp dispatches to the parsed one.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace jitcache::tool {

struct Command {
  CLI::App* cli = nullptr;
  std::function<int()> run;  // the process exit code
};

Command add_run_command(CLI::App& app);
Command add_stats_command(CLI::App& app);
Command add_ls_command(CLI::App& app);
Command add_show_command(CLI::App& app);
Command add_verify_command(CLI::App& app);
Command add_evict_command(CLI::App& app);
Command add_clear_command(CLI::App& app);
Command add_config_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_doctor_command(CLI::App& app);
Command add_generate_command(CLI::App& app);  // hidden: man pages and completion for the build
Command add_warm_command(CLI::App& app);
Command add_wait_command(CLI::App& app);
Command add_replay_command(CLI::App& app);  // hidden: one program, for warm and the capture helper
#ifndef _WIN32
Command add_pack_command(CLI::App& app);  // packs need libcrypto: not in the Windows build
#endif

// Shared by the commands.
int report_error(const std::string& message, int exit_code = 1);  // "jitcache: error: ..." on stderr
void print_json(const nlohmann::json& value);                     // 2-space indented, to stdout

// Version of every --json document this tool prints (docs/cli.md); bumped when a field changes meaning.
inline constexpr int kJsonSchemaVersion = 1;

}  // namespace jitcache::tool
