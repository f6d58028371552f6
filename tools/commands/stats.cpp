// jitcache stats [--json] [--zero]: the counters every process adds to, and the store's size.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "core/settings.hpp"
#include "core/stats.hpp"
#include "core/trace.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

struct StatsOptions {
  bool json = false;
  bool zero = false;
};

// Every counter the engine knows, in display order, so that a fresh cache shows zeros.
const std::vector<const char*> kKnownCounters = {
    counter::hit_memory, counter::hit_pack, counter::hit_disk,  counter::hit_remote, counter::miss,     counter::store,
    counter::store_skipped, counter::stale,  counter::corrupt,    counter::error,    counter::eviction,
    counter::bytes_stored, counter::time_saved_us, counter::pack_refused, "captured_by_helper", "capture_helper_started",
    counter::helper_cpu_os_us,
    "capture_helper_processes",
    "capture_helper_queued", "capture_helper_at_exit", "capture_helper_failed", "capture_helper_died", "capture_helper_unloadable",
    "capture_helper_not_started", counter::warm_unloadable};

nlohmann::json stats_json(const Settings& settings, const CounterMap& stored, const SizeInfo& size,
                          std::size_t captures_in_flight) {
  const TraceUsage traces = trace_usage(settings.trace_dir);
  CounterMap counters = stored;
  for (const char* name : kKnownCounters) counters.emplace(name, 0);
  nlohmann::json uncacheable = nlohmann::json::object();
  std::int64_t uncacheable_total = 0;
  const std::string prefix = counter::uncacheable_prefix;
  for (const auto& [name, value] : counters) {
    if (name.rfind(prefix, 0) == 0) {
      uncacheable[name.substr(prefix.size())] = value;
      uncacheable_total += value;
    }
  }
  // Capture helpers' CPU by step (core/cpu_account.hpp), in seconds.
  nlohmann::json helper_cpu = nlohmann::json::object();
  std::int64_t helper_cpu_us = 0;
  const std::string cpu_prefix = counter::helper_cpu_prefix;
  for (const auto& [name, value] : counters) {
    if (name.rfind(cpu_prefix, 0) != 0) continue;
    helper_cpu[name.substr(cpu_prefix.size())] = static_cast<double>(value) / 1e6;
    helper_cpu_us += value;
  }
  const std::int64_t hits = counters[counter::hit_memory] + counters[counter::hit_pack] + counters[counter::hit_disk] +
                            counters[counter::hit_remote];
  const std::int64_t lookups = hits + counters[counter::miss];
  return {{"schema", kJsonSchemaVersion},
          {"dir", settings.dir.string()},
          {"counters", counters},
          {"hits", hits},
          {"lookups", lookups},
          {"hit_rate", lookups > 0 ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0},
          {"uncacheable", uncacheable},
          {"uncacheable_total", uncacheable_total},
          {"helper_cpu", helper_cpu},
          {"helper_cpu_total_s", static_cast<double>(helper_cpu_us) / 1e6},
          {"helper_cpu_os_s", static_cast<double>(counters[counter::helper_cpu_os_us]) / 1e6},
          {"store", {{"entries", size.entries}, {"bytes", size.bytes}, {"max_bytes", settings.max_size},
                     {"captures_in_flight", captures_in_flight}}},
          {"traces", {{"dir", settings.trace_dir.string()}, {"files", traces.files}, {"bytes", traces.bytes},
                      {"max_files", settings.trace_max_files}, {"max_bytes", settings.trace_max_size}}}};
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", fraction * 100);
  return text;
}

std::string seconds(const nlohmann::json& value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", value.get<double>());
  return text;
}

void print_human(const nlohmann::json& stats) {
  const auto& c = stats["counters"];
  auto n = [&](const char* name) { return std::to_string(c.value(name, std::int64_t{0})); };
  const std::uint64_t bytes = stats["store"]["bytes"], max_bytes = stats["store"]["max_bytes"];
  std::printf("Cache directory %s\n\n", stats["dir"].get<std::string>().c_str());
  Table table({}, {1});
  table.add({"Entries", std::to_string(stats["store"]["entries"].get<std::uint64_t>())});
  if (const std::size_t in_flight = stats["store"]["captures_in_flight"]; in_flight > 0) {
    table.add({"  in flight", std::to_string(in_flight), "more entries capture helpers are storing (`jitcache wait`)"});
  }
  table.add({"Size", format_size(bytes), "of " + format_size(max_bytes) +
                                             (max_bytes ? " (" + percent(double(bytes) / double(max_bytes)) + ")" : "")});
  const auto& traces = stats["traces"];
  table.add({"Traces", std::to_string(traces["files"].get<std::uint64_t>()) + " files",
             format_size(traces["bytes"].get<std::uint64_t>()) + " in " + traces["dir"].get<std::string>() +
                 " (kept apart from Size: bounded by trace_max_files/size/age)"});
  table.add({});
  table.add({"Hits", std::to_string(stats["hits"].get<std::int64_t>()), percent(stats["hit_rate"]) + " of lookups"});
  table.add({"  memory", n(counter::hit_memory)});
  table.add({"  packs", n(counter::hit_pack), "hits from packs (JITCACHE_PACKS)"});
  table.add({"  disk", n(counter::hit_disk)});
  table.add({"  remote", n(counter::hit_remote)});
  table.add({"Misses", n(counter::miss), "real builds (including rebuilds of stale or corrupt entries)"});
  table.add({"Captured by helpers", n("captured_by_helper"),
             "misses whose binary a capture helper built and stored outside the app (not lookups)"});
  table.add({"  helpers started", n("capture_helper_started"),
             n("capture_helper_queued") + " kept in the app for its exit (helper_start = at_exit), " + n("capture_helper_at_exit") +
                 " started at the app's exit"});
  table.add({"  helper processes", n("capture_helper_processes"), "one per app run that handed programs over"});
  table.add({"  failed / died", n("capture_helper_failed") + " / " + n("capture_helper_died"),
             "that entry is built again by the next run"});
  table.add({"  did not load back", n("capture_helper_unloadable"),
             "of the failed: the built binary did not load in a fresh context, so it was not stored"});
  table.add({"  not started", n("capture_helper_not_started"), "no jitcache binary, or no recorded inputs"});
  table.add({"  helper CPU", seconds(stats["helper_cpu_total_s"]),
             "by step below; the OS charged " + seconds(stats["helper_cpu_os_s"]) + " to helpers that ended"});
  // In the order a capture goes through them (docs/trace-format.md, "helper_cpu"); any other after.
  const auto& steps = stats["helper_cpu"];
  const std::vector<std::string> order = {"helper_startup", "helper", "worker_start", "driver_load", "job", "build",
                                          "answers", "read_binary", "load_back", "store"};
  for (const std::string& step : order) {
    if (steps.contains(step)) table.add({"    " + step, seconds(steps[step])});
  }
  for (const auto& [step, value] : steps.items()) {
    if (std::find(order.begin(), order.end(), step) == order.end()) table.add({"    " + step, seconds(value)});
  }
  table.add({"Warm: did not load back", n(counter::warm_unloadable),
             "binaries `jitcache warm` rebuilt that did not load in a fresh context: not stored, reported failed"});
  table.add({"Stores", n(counter::store), format_size(c.value(counter::bytes_stored, std::uint64_t{0})) + " written"});
  table.add({"Stores skipped", n(counter::store_skipped), "read-only, or entry size limits"});
  table.add({"Stale rejected", n(counter::stale), "cached binaries the driver refused"});
  table.add({"Corrupt entries", n(counter::corrupt), "failed their checksum, quarantined"});
  table.add({"Errors", n(counter::error), "store could not be read or written"});
  table.add({"Pack entries refused", n(counter::pack_refused), "failed their checksum in a pack, not served"});
  table.add({"Evictions", n(counter::eviction)});
  table.add({"Uncacheable", std::to_string(stats["uncacheable_total"].get<std::int64_t>())});
  for (const auto& [reason, count] : stats["uncacheable"].items()) {
    std::string readable = reason;
    for (char& ch : readable) if (ch == '_') ch = ' ';
    table.add({"  " + readable, std::to_string(count.get<std::int64_t>())});
  }
  table.add({"Time saved", format_duration_us(c.value(counter::time_saved_us, std::uint64_t{0})),
             "recorded compile time minus load time, over all hits"});
  std::fputs(table.render().c_str(), stdout);
}

int show_stats(const StatsOptions& options) {
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  if (!store) return report_error(error);
  const nlohmann::json stats =
      stats_json(settings, read_stats(settings.dir), store->size(), store->captures_in_flight());
  if (options.json) print_json(stats);
  else print_human(stats);
  if (options.zero) {
    if (!zero_stats(settings.dir)) return report_error("could not zero the statistics in " + settings.dir.string());
    if (!options.json) std::puts("Statistics zeroed.");
  }
  return 0;
}

}  // namespace

Command add_stats_command(CLI::App& app) {
  auto options = std::make_shared<StatsOptions>();
  CLI::App* cli = app.add_subcommand("stats", "hits, misses, stores, errors, size and time saved");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  cli->add_flag("-z,--zero", options->zero, "print, then reset the counters to zero");
  return {cli, [options] { return show_stats(*options); }};
}

}  // namespace jitcache::tool
