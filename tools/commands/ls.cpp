// jitcache ls [--json] [--sort size|age|hits]: one line per entry.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include "core/entry_hits.hpp"
#include "store/file_ops.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/captures.hpp"
#include "tools/lib/entry_view.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/progress.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

struct LsOptions {
  bool json = false;
  std::string sort = "age";
};

int list_entries(const LsOptions& options) {
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store_to_list(settings, &error);
  if (!store) return report_error(error);
  std::vector<EntryInfo> entries;
  {
    Progress progress;
    entries = store->list_summaries(std::ref(progress));
  }
  const std::size_t in_flight = store->captures_in_flight();
  const EntryHits hits = read_entry_hits(settings.dir);
  auto hits_of = [&](const EntryInfo& entry) {
    auto it = hits.find(entry.key.hex());
    return it == hits.end() ? std::int64_t{0} : it->second;
  };
  // Most interesting first: biggest, most recently used, most hit.
  std::stable_sort(entries.begin(), entries.end(), [&](const EntryInfo& a, const EntryInfo& b) {
    if (options.sort == "size") return a.bytes > b.bytes;
    if (options.sort == "hits") return hits_of(a) > hits_of(b);
    return a.last_access_ns > b.last_access_ns;
  });

  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    std::uint64_t total = 0;
    for (const EntryInfo& entry : entries) {
      list.push_back(entry_summary_json(entry, hits_of(entry)));
      total += entry.bytes;
    }
    print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"sort", options.sort},
                {"total_bytes", total}, {"captures_in_flight", in_flight}, {"entries", list}});
    return 0;
  }
  if (std::string note = in_flight_note(in_flight); !note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
  if (entries.empty()) {
    std::printf("No entries in %s\n", settings.dir.string().c_str());
    return 0;
  }
  Table table({"KEY", "SIZE", "HITS", "LAST USED", "BUILD", "KIND", "DEVICE", "KERNELS", "LABEL"}, {1, 2, 4});
  const std::int64_t now = fileops::now_ns();
  std::uint64_t total = 0;
  for (const EntryInfo& entry : entries) {
    const auto& sidecar = entry.sidecar;
    const std::string device = sidecar.is_object() ? sidecar.value("device", std::string("?")) : "?";
    table.add({entry.key.hex(), format_size(entry.bytes), std::to_string(hits_of(entry)),
               format_age_ns(now - entry.last_access_ns) + " ago",
               format_duration_us(sidecar.is_object() ? sidecar.value("compile_time_us", std::uint64_t{0}) : 0),
               entry_kind(sidecar), device.size() > 32 ? device.substr(0, 30) + ".." : device,
               entry_kernels(sidecar), entry_label(sidecar)});
    total += entry.bytes;
  }
  std::fputs(table.render().c_str(), stdout);
  std::printf("%zu entries, %s\n", entries.size(), format_size(total).c_str());
  return 0;
}

}  // namespace

Command add_ls_command(CLI::App& app) {
  auto options = std::make_shared<LsOptions>();
  CLI::App* cli = app.add_subcommand("ls", "list cache entries");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  cli->add_option("--sort", options->sort, "size, age (last use, default) or hits")
      ->check(CLI::IsMember({"size", "age", "hits"}));
  return {cli, [options] { return list_entries(*options); }};
}

}  // namespace jitcache::tool
