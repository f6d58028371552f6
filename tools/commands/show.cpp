// jitcache show KEY [--json] [--extract FILE]: one entry's sidecar in readable form.
#include <cstdio>
#include <memory>

#include "core/entry_hits.hpp"
#include "store/files/file_ops.hpp"
#include "store/files/user_path.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/entry_view.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

using nlohmann::json;

struct ShowOptions {
  std::string key;
  bool json = false;
  std::string extract;
};

const json& component_value(const json& sidecar, const char* name) {
  static const json null_value;
  if (!sidecar.contains("components") || !sidecar["components"].contains(name)) return null_value;
  const json& component = sidecar["components"][name];
  return component.contains("value") ? component["value"] : null_value;
}

void add_pairs(Table& table, const char* label, const json& object) {
  bool first = true;
  if (!object.is_object() || object.empty()) table.add({label, "none"});
  else for (const auto& [name, value] : object.items()) {
    table.add({first ? label : "", name + " = " + (value.is_string() ? value.get<std::string>() : value.dump())});
    first = false;
  }
}

void print_components(const json& sidecar) {
  Table table;
  table.add({"options", component_value(sidecar, "options").is_string() &&
                                !component_value(sidecar, "options").get<std::string>().empty()
                            ? component_value(sidecar, "options").get<std::string>()
                            : "(none)"});
  const json& headers = component_value(sidecar, "headers");
  if (!headers.is_array() || headers.empty()) table.add({"headers", "none"});
  bool first = true;
  for (const json& header : headers.is_array() ? headers : json::array()) {
    table.add({first ? "headers" : "", header.value("name", std::string()) + "  " +
                                           (header.value("found", false) ? header.value("path", std::string()) +
                                                                               "  digest " +
                                                                               short_hex(header.value("digest", std::string()))
                                                                         : std::string("(not found)"))});
    first = false;
  }
  const json& constants = component_value(sidecar, "spec_constants");
  if (!constants.is_array() || constants.empty()) table.add({"spec constants", "none"});
  first = true;
  for (const json& constant : constants.is_array() ? constants : json::array()) {
    table.add({first ? "spec constants" : "",
               "id " + constant.value("id", json(0)).dump() + " = 0x" + constant.value("value_hex", std::string())});
    first = false;
  }
  add_pairs(table, "environment", component_value(sidecar, "environment"));
  const json& compiler = component_value(sidecar, "compiler");
  first = true;
  for (const json& library : compiler.is_object() ? compiler.value("libraries", json::array()) : json::array()) {
    const std::string id = library.value("build_id", std::string());
    table.add({first ? "compiler" : "",
               library.value("path", std::string()) + "  " +
                   (id.empty() ? "size " + std::to_string(library.value("size", std::uint64_t{0})) + ", modified " +
                                     format_time_ns(library.value("mtime_ns", std::int64_t{0}))
                               : "build-id " + short_hex(id, 16))});
    first = false;
  }
  if (compiler.is_object()) add_pairs(table, first ? "compiler" : "", compiler.value("versions", json::object()));
  add_pairs(table, "device", component_value(sidecar, "device"));
  const json& input = component_value(sidecar, "input");
  if (input.is_object()) {
    table.add({"input", std::to_string(input.value("size", std::uint64_t{0})) + " bytes, digest " +
                            input.value("digest", std::string()) + (input.contains("text") ? " (source kept)" : "")});
  }
  std::fputs(table.render("  ").c_str(), stdout);
}

int extract_binary(DiskStore& store, const EntryInfo& entry, const std::string& file) {
  LoadResult loaded = store.load(entry.key);
  if (loaded.status != LoadStatus::hit) {
    return report_error("cannot extract " + entry.key.hex() + ": " +
                        (loaded.reason.empty() ? std::string("entry vanished") : loaded.reason));
  }
  // Never through a link or into a device someone put at that name (the tool may run as root).
  std::string error;
  if (!write_user_file(file, loaded.binary, 0644, &error)) return report_error("cannot extract: " + error);
  std::fprintf(stderr, "wrote %zu bytes (checksum verified) to %s\n", loaded.binary.size(), file.c_str());
  return 0;
}

int show_entry(const ShowOptions& options) {
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  if (!store) return report_error(error);
  std::optional<EntryInfo> entry = find_entry(*store, options.key, &error);
  if (!entry) return report_error(error);
  if (!options.extract.empty()) {
    if (int status = extract_binary(*store, *entry, options.extract)) return status;
  }
  const EntryHits hits = read_entry_hits(settings.dir);
  const std::int64_t hit_count = hits.count(entry->key.hex()) ? hits.at(entry->key.hex()) : 0;
  const json& sidecar = entry->sidecar;
  if (options.json) {
    print_json({{"schema", kJsonSchemaVersion}, {"entry", entry_summary_json(*entry, hit_count)}, {"sidecar", sidecar}});
    return 0;
  }
  if (!options.extract.empty()) return 0;
  if (!sidecar.is_object()) return report_error("the sidecar of " + entry->key.hex() + " is not readable JSON");
  const std::string hex = entry->key.hex();
  std::printf("Entry %s\n", hex.c_str());
  Table facts;
  facts.add({"files", (settings.dir / hex.substr(0, 2) / hex.substr(2, 2) / (hex + ".entry")).string()});
  facts.add({"program", entry_kind(sidecar) + ", kernels " + entry_kernels(sidecar, 200)});
  if (!entry_label(sidecar).empty()) facts.add({"label", entry_label(sidecar)});
  facts.add({"device", sidecar.value("device", std::string("?"))});
  facts.add({"built", sidecar.value("created", std::string("?")) + " by " + sidecar.value("created_by", std::string("?")) +
                          " in " + format_duration_us(sidecar.value("compile_time_us", std::uint64_t{0}))});
  facts.add({"last used", format_age_ns(fileops::now_ns() - entry->last_access_ns) + " ago, " +
                              std::to_string(hit_count) + " hits"});
  facts.add({"binary", format_size(sidecar.value("binary_size", std::uint64_t{0})) + ", xxh3-64 " +
                           sidecar.value("binary_xxh3_64", std::string("?"))});
  std::fputs(facts.render("  ").c_str(), stdout);
  std::puts("\nKey components");
  print_components(sidecar);
  const std::string log = sidecar.value("build_log", std::string());
  if (!log.empty()) std::printf("\nBuild log (excerpt)\n%s%s", log.c_str(), log.back() == '\n' ? "" : "\n");
  return 0;
}

}  // namespace

Command add_show_command(CLI::App& app) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* cli = app.add_subcommand("show", "one entry in readable form");
  cli->add_option("key", options->key, "the entry's key, or its first digits (at least 4)")->required();
  cli->add_flag("--json", options->json, "machine-readable output: the sidecar as stored (docs/cli.md)");
  cli->add_option("--extract", options->extract, "write the entry's binary (checksum verified) to FILE");
  return {cli, [options] { return show_entry(*options); }};
}

}  // namespace jitcache::tool
