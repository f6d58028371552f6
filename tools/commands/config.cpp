// jitcache config [--json]: every setting's effective value and where it came from.
#include <cstdio>
#include <memory>

#include "core/settings.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/format.hpp"

namespace jitcache::tool {
namespace {

int show_config(bool json) {
  const Settings settings = load_settings();
  const std::string file = (settings.dir / "jitcache.conf").string();
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const SettingDefinition& definition : setting_definitions()) {
      const RawSetting& raw = settings.raw.at(definition.key);
      list.push_back({{"key", definition.key}, {"env", definition.env},
                      {"value", redacted_setting(definition.key, raw.value)},
                      {"origin", to_string(raw.origin)}, {"default", definition.default_value},
                      {"meaning", plain_text(definition.doc)}});
    }
    print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"config_file", file},
                {"settings", list}, {"problems", settings.problems}});
    return 0;
  }
  std::printf("Settings (environment > %s > default)\n", file.c_str());
  Table table({"KEY", "VALUE", "FROM", "VARIABLE"});
  for (const SettingDefinition& definition : setting_definitions()) {
    const RawSetting& raw = settings.raw.at(definition.key);
    std::string value = raw.value.empty() ? "(empty)" : redacted_setting(definition.key, raw.value);
    if (value.size() > 60) value = value.substr(0, 58) + "..";
    table.add({definition.key, value, to_string(raw.origin), definition.env});
  }
  std::fputs(table.render("  ").c_str(), stdout);
  for (const std::string& problem : settings.problems) std::printf("warning: %s (default used)\n", problem.c_str());
  return 0;
}

}  // namespace

Command add_config_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cli = app.add_subcommand("config", "effective settings and where each came from (default, file, env)");
  cli->add_flag("--json", *json, "machine-readable output (docs/cli.md)");
  return {cli, [json] { return show_config(*json); }};
}

}  // namespace jitcache::tool
