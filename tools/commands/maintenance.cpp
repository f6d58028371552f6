// jitcache verify | evict | clear: whole-store maintenance through the store's own API, so the
// tool takes the same locks and keeps the same size accounting as the library.
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <set>

#include "core/entry_hits.hpp"
#include "core/stats.hpp"
#include "core/trace.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/captures.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/progress.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

struct VerifyOptions {
  bool json = false;
  bool quarantine = false;
};

struct EvictOptions {
  std::string max_size;
  std::string older_than;
  bool json = false;
};

struct ClearOptions {
  bool json = false;
};

// Hit counts of entries that are gone are dropped, so the file never outgrows the store. A stat
// per counted key, not a read of every sidecar.
void forget_removed_entries(DiskStore& store) {
  std::set<std::string> live;
  for (const auto& [hex, hits] : read_entry_hits(store.root())) {
    const std::optional<Digest128> key = Digest128::from_hex(hex);
    if (key && store.contains(*key)) live.insert(hex);
  }
  (void)prune_entry_hits(store.root(), live);
}

int verify_store(const VerifyOptions& options) {
  const Settings settings = load_settings();
  std::error_code missing;
  if (!std::filesystem::exists(settings.dir, missing) && !missing) {  // nothing stored yet: nothing wrong
    if (options.json) {
      print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"entries_checked", 0},
                  {"quarantine", options.quarantine}, {"ok", true}, {"problems", nlohmann::json::array()}});
    } else {
      std::printf("No cache at %s yet: nothing to verify\n", settings.dir.string().c_str());
    }
    return 0;
  }
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/options.quarantine, &error);
  if (!store) return report_error(error);
  const SizeInfo size = store->size();
  std::vector<VerifyProblem> problems;
  {
    Progress progress;
    problems = store->verify(options.quarantine, std::ref(progress));
  }
  if (!options.json) note_captures_in_flight(*store);
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& problem : problems) list.push_back({{"path", problem.path}, {"problem", problem.problem}});
    print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"entries_checked", size.entries},
                {"captures_in_flight", store->captures_in_flight()},
                {"quarantine", options.quarantine}, {"ok", problems.empty()}, {"problems", list}});
  } else if (problems.empty()) {
    std::printf("%llu entries checked in %s: all sound\n", static_cast<unsigned long long>(size.entries),
                settings.dir.string().c_str());
  } else {
    std::printf("%llu entries checked in %s: %zu problem%s\n", static_cast<unsigned long long>(size.entries),
                settings.dir.string().c_str(), problems.size(), problems.size() == 1 ? "" : "s");
    Table table({"PROBLEM", "PATH"});
    for (const auto& problem : problems) table.add({problem.problem, problem.path});
    std::fputs(table.render("  ").c_str(), stdout);
    if (!options.quarantine) std::puts("Run `jitcache verify --quarantine` to move bad entries out of use.");
  }
  return problems.empty() ? 0 : 1;
}

int evict_entries(const EvictOptions& options) {
  if (options.max_size.empty() && options.older_than.empty()) {
    return report_error("evict: give --max-size SIZE and/or --older-than AGE", 2);
  }
  std::uint64_t target = std::numeric_limits<std::uint64_t>::max(), age_s = 0;
  if (!options.max_size.empty()) {
    auto size = parse_size(options.max_size);
    if (!size) return report_error("evict: --max-size '" + options.max_size + "' is not a size (e.g. 500M, 2G)", 2);
    target = *size;
  }
  if (!options.older_than.empty()) {
    auto age = parse_duration_s(options.older_than);
    if (!age || *age == 0) {
      return report_error("evict: --older-than '" + options.older_than + "' is not a duration (e.g. 30d, 12h)", 2);
    }
    age_s = *age;
  }
  const Settings settings = load_settings();
  if (settings.read_only) return report_error("evict: the cache is read-only (JITCACHE_READ_ONLY)");
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/true, &error);
  if (!store) return report_error(error);
  if (!options.json) note_captures_in_flight(*store);
  EvictionReport report;
  {
    Progress progress;
    report = store->evict(target, age_s, std::ref(progress));
  }
  if (report.removed_entries) {
    count(counter::eviction, static_cast<std::int64_t>(report.removed_entries));
    (void)flush_stats(store->root());
  }
  forget_removed_entries(*store);
  const SizeInfo size = store->size();
  if (options.json) {
    print_json({{"schema", kJsonSchemaVersion}, {"removed_entries", report.removed_entries},
                {"removed_bytes", report.removed_bytes}, {"entries", size.entries}, {"bytes", size.bytes}});
  } else {
    std::printf("Evicted %llu entries (%s); %llu entries (%s) remain\n",
                static_cast<unsigned long long>(report.removed_entries), format_size(report.removed_bytes).c_str(),
                static_cast<unsigned long long>(size.entries), format_size(size.bytes).c_str());
  }
  return 0;
}

int clear_store(const ClearOptions& options) {
  const Settings settings = load_settings();
  if (settings.read_only) return report_error("clear: the cache is read-only (JITCACHE_READ_ONLY)");
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/true, &error);
  if (!store) return report_error(error);
  EvictionReport report;
  {
    Progress progress;
    report = store->clear(std::ref(progress));
  }
  forget_removed_entries(*store);
  const SizeInfo left = store->size();
  // Traces inline kernel sources: clearing the cache clears them too (a refused folder is left).
  std::string trace_error;
  const TraceUsage traces = clear_traces(settings.trace_dir, &trace_error);
  if (!trace_error.empty()) std::fprintf(stderr, "jitcache: traces not cleared: %s\n", trace_error.c_str());
  for (const std::string& aside : report.moved_aside) {
    std::fprintf(stderr, "jitcache: %s belongs to another user (or others may write it): moved aside; "
                         "its owner or root must remove it\n", aside.c_str());
  }
  if (options.json) {
    print_json({{"schema", kJsonSchemaVersion}, {"removed_entries", report.removed_entries},
                {"removed_bytes", report.removed_bytes}, {"entries", left.entries},
                {"removed_traces", traces.files}, {"removed_trace_bytes", traces.bytes},
                {"moved_aside", report.moved_aside}});
  } else {
    std::printf("Removed %llu entries (%s) and %llu traces from %s\n",
                static_cast<unsigned long long>(report.removed_entries), format_size(report.removed_bytes).c_str(),
                static_cast<unsigned long long>(traces.files), settings.dir.string().c_str());
  }
  return left.entries == 0 ? 0 : report_error("clear: " + std::to_string(left.entries) + " entries could not be removed");
}

}  // namespace

Command add_verify_command(CLI::App& app) {
  auto options = std::make_shared<VerifyOptions>();
  CLI::App* cli = app.add_subcommand("verify", "check every entry's checksum and sidecar (exit 1 on problems)");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  cli->add_flag("--quarantine", options->quarantine, "move bad entries to <dir>/quarantine");
  return {cli, [options] { return verify_store(*options); }};
}

Command add_evict_command(CLI::App& app) {
  auto options = std::make_shared<EvictOptions>();
  CLI::App* cli = app.add_subcommand("evict", "remove least recently used entries");
  cli->add_option("--max-size", options->max_size, "evict until the cache holds at most SIZE (e.g. 500M)");
  cli->add_option("--older-than", options->older_than, "evict entries not used for AGE (e.g. 30d, 12h)");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  return {cli, [options] { return evict_entries(*options); }};
}

Command add_clear_command(CLI::App& app) {
  auto options = std::make_shared<ClearOptions>();
  CLI::App* cli = app.add_subcommand("clear", "remove every entry (statistics are kept)");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  return {cli, [options] { return clear_store(*options); }};
}

}  // namespace jitcache::tool
