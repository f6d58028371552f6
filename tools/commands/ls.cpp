// jitcache ls [--json] [--sort key|used|size|hits]: one line per entry.
//
// The default order is the store's own (by key): rows are printed a level-1 shard (or a piece of
// one) at a time as the index hands them over, so `ls | head` reads one shard's index, not the
// store. The other orders need every entry first (`used` one stat per entry: hits touch the entry files, not the
// index), as `ls -t` does (docs/decisions/store.md, "Listing order").
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include "core/entry_hits.hpp"
#include "store/files/file_ops.hpp"
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
  std::string sort = "key";
};

class HitCounts {
 public:
  explicit HitCounts(const std::filesystem::path& root) : hits_(read_entry_hits(root)) {}
  std::int64_t of(const EntryInfo& entry) const {
    auto it = hits_.find(entry.key.hex());
    return it == hits_.end() ? std::int64_t{0} : it->second;
  }

 private:
  EntryHits hits_;
};

// The table, printed as its rows come; the widths fit common values so that chunks line up.
class ListingTable {
 public:
  ListingTable() : table_({"KEY", "SIZE", "HITS", "LAST USED", "BUILD", "KIND", "DEVICE", "KERNELS", "LABEL"}, {1, 2, 4}) {
    table_.set_min_widths({32, 10, 4, 10, 8, 15, 32, 12});  // DEVICE: its cut-off width
  }
  void add(const EntryInfo& entry, std::int64_t hits) {
    const auto& sidecar = entry.sidecar;
    const std::string device = sidecar.is_object() ? sidecar.value("device", std::string("?")) : "?";
    table_.add({entry.key.hex(), format_size(entry.bytes), std::to_string(hits),
                format_age_ns(now_ - entry.last_access_ns) + " ago",
                format_duration_us(sidecar.is_object() ? sidecar.value("compile_time_us", std::uint64_t{0}) : 0),
                entry_kind(sidecar), device.size() > 32 ? device.substr(0, 30) + ".." : device, entry_kernels(sidecar),
                entry_label(sidecar)});
    ++entries_;
    bytes_ += entry.bytes;
  }
  void print() {
    std::fputs(table_.take_rendered().c_str(), stdout);
    std::fflush(stdout);
  }
  std::size_t entries() const { return entries_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  Table table_;
  const std::int64_t now_ = fileops::now_ns();
  std::size_t entries_ = 0;
  std::uint64_t bytes_ = 0;
};

// Most interesting first: most recently used, biggest, most hit.
void sort_entries(std::vector<EntryInfo>* entries, const std::string& order, const HitCounts& hits) {
  if (order == "key") return;  // the listing's own order
  std::stable_sort(entries->begin(), entries->end(), [&](const EntryInfo& a, const EntryInfo& b) {
    if (order == "size") return a.bytes > b.bytes;
    if (order == "hits") return hits.of(a) > hits.of(b);
    return a.last_access_ns > b.last_access_ns;
  });
}

int print_json_listing(DiskStore& store, const Settings& settings, const std::string& order) {
  std::vector<EntryInfo> entries;
  {
    Progress progress;
    entries = store.list_summaries(std::ref(progress));
  }
  const HitCounts hits(settings.dir);
  sort_entries(&entries, order, hits);
  nlohmann::json list = nlohmann::json::array();
  std::uint64_t total = 0;
  for (const EntryInfo& entry : entries) {
    list.push_back(entry_summary_json(entry, hits.of(entry)));
    total += entry.bytes;
  }
  print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"sort", order}, {"total_bytes", total},
              {"captures_in_flight", store.captures_in_flight()}, {"entries", list}});
  return 0;
}

int list_entries(const LsOptions& options) {
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store_to_list(settings, &error);
  if (!store) return report_error(error);
  const std::string order = options.sort == "age" ? "used" : options.sort;  // "age": the old name
  if (options.json) return print_json_listing(*store, settings, order);

  if (std::string note = in_flight_note(store->captures_in_flight()); !note.empty()) {
    std::fprintf(stderr, "%s\n", note.c_str());
  }
  const HitCounts hits(settings.dir);
  ListingTable table;
  Progress progress;
  if (order == "key") {
    store->visit_summaries(
        [&](std::vector<EntryInfo>& shard) {
          for (const EntryInfo& entry : shard) table.add(entry, hits.of(entry));
          progress.clear();
          table.print();
        },
        std::ref(progress));
  } else {
    std::vector<EntryInfo> entries = store->list_summaries(std::ref(progress));
    progress.clear();
    sort_entries(&entries, order, hits);
    for (const EntryInfo& entry : entries) table.add(entry, hits.of(entry));
    if (!entries.empty()) table.print();
  }
  progress.clear();
  if (table.entries() == 0) {
    std::printf("No entries in %s\n", settings.dir.string().c_str());
    return 0;
  }
  std::printf("%zu entries, %s\n", table.entries(), format_size(table.bytes()).c_str());
  return 0;
}

}  // namespace

Command add_ls_command(CLI::App& app) {
  auto options = std::make_shared<LsOptions>();
  CLI::App* cli = app.add_subcommand("ls", "list cache entries");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  cli->add_option("--sort", options->sort,
                  "key (the store's order, default: printed as it is read), used (last use first; also `age`), "
                  "size or hits")
      ->check(CLI::IsMember({"key", "used", "age", "size", "hits"}));
  return {cli, [options] { return list_entries(*options); }};
}

}  // namespace jitcache::tool
