// jitcache explain TRACE|--last [--json]: why a lookup missed, component by component, against
// the cached entries closest to it. The comparison itself is tools/lib/explain.cpp.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include "core/trace.hpp"
#include "store/files/file_ops.hpp"
#include "store/files/json_file.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/entry_view.hpp"
#include "tools/lib/explain.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ExplainOptions {
  std::string trace;
  bool last = false;
  bool json = false;
  std::size_t top = 3;
};

// The newest trace that was not a hit (the one worth explaining), else the newest of all.
// Trace names start with their UTC time, so name order is time order.
// The folder is read by the rules the library writes it by (core/trace.hpp: no symlinks, the
// user's own folder).
std::optional<fs::path> newest_trace(const fs::path& dir, std::string* error) {
  std::string problem;
  const std::vector<fs::path> files = trace_records(dir, &problem);
  if (!problem.empty()) {
    *error = "explain: cannot read traces: " + problem;
    return std::nullopt;
  }
  if (files.empty()) {
    *error = "no traces in " + dir.string() + " (run the app with JITCACHE_TRACE=1 or `jitcache run --trace`)";
    return std::nullopt;
  }
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    auto trace = read_json_object(*it);
    // A capture helper's build is the app's miss captured, not a lookup of its own to explain.
    if (trace && trace->value("verdict", std::string()) != "hit" && !trace->contains("capture_helper")) return *it;
  }
  return files.back();
}

// Why the lookup did not (or did) use the cache, before any comparison: for verdicts other than
// a plain miss the trace says it all.
std::string verdict_sentence(const json& trace) {
  const std::string verdict = trace.value("verdict", std::string("?"));
  const std::string reason = trace.value("reason", std::string());
  if (verdict == "hit") return "hit: served from the " + trace.value("tier", std::string("disk")) + " cache; nothing to explain";
  if (verdict == "stale") {
    return "stale: an entry with exactly this key existed, but the driver refused its binary (" + reason +
           "); it was dropped and rebuilt. Usual cause: a driver update that kept its version strings";
  }
  if (verdict == "uncacheable") return "uncacheable: " + reason;
  if (reason.rfind("corrupt", 0) == 0) {
    return "miss: an entry with exactly this key existed but failed its integrity check (" + reason +
           "); it was quarantined and rebuilt";
  }
  if (verdict == "failed") return "failed: the real build failed, so nothing was stored";
  if (verdict == "captured") return "captured: a capture helper built this program for an app's miss and stored it";
  return "";
}

// What a capture helper did for this lookup (capture = helper/auto), or empty.
std::string capture_sentence(const json& trace, bool stored) {
  if (auto helper = trace.find("capture_helper"); helper != trace.end() && helper->is_object()) {
    const std::int64_t ran_us = helper->value("ended_us", std::int64_t{0}) - helper->value("started_us", std::int64_t{0});
    return "this is a capture helper's build for the app of pid " + helper->value("for_pid", json(0)).dump() + " (it ran " +
           format_duration_us(static_cast<std::uint64_t>(std::max<std::int64_t>(0, ran_us))) + ")";
  }
  const std::string reason = trace.value("reason", std::string());
  if (reason.find("captured outside the app") == std::string::npos) return {};
  return reason + "; the entry is " +
         (stored ? std::string("stored now")
                 : "not stored (the helper has not finished, or failed: see capture_helper_* in `jitcache stats`)");
}

json difference_json(const Difference& d) {
  return {{"component", d.component}, {"subject", d.subject}, {"change", d.change},
          {"now", d.now},             {"cached", d.cached},   {"description", d.description}};
}

json match_json(const EntryMatch& match) {
  json differences = json::array();
  for (const auto& d : match.differences) differences.push_back(difference_json(d));
  const json& sidecar = match.entry->sidecar;
  return {{"key", match.entry->key},
          {"created", sidecar.value("created", std::string())},
          {"last_access_ns", match.entry->last_access_ns},
          {"kernel_names", sidecar.contains("kernel_names") ? sidecar["kernel_names"] : json::array()},
          {"label", entry_label(sidecar)},
          {"same_input", match.same_input},
          {"source_similarity", match.source_similarity},
          {"total_components", match.total_components},
          {"summary", summarize(match.differences)},
          {"differences", differences}};
}

std::string closeness(const EntryMatch& match) {
  std::set<std::string> components;
  for (const auto& d : match.differences) components.insert(d.component);
  std::string relation = match.same_input ? "same program source" : "same kernels, different source";
  if (!match.same_input && !match.shares_kernels) relation = "similar source";
  return relation + "; " + std::to_string(components.size()) + " of " + std::to_string(match.total_components) +
         " key components" + (components.size() == 1 ? " differs" : " differ");
}

void print_human(const fs::path& trace_file, const json& trace, const std::vector<std::string>& kernels,
                 const std::vector<EntryMatch>& matches, std::size_t entry_count, const std::string& answer,
                 const std::string& capture) {
  std::printf("%s\n", answer.c_str());
  if (!capture.empty()) std::printf("capture: %s\n", capture.c_str());
  if (!matches.empty() && !suggestion(matches.front()).empty()) std::printf("hint: %s\n", suggestion(matches.front()).c_str());
  std::printf("\n");
  Table lookup;
  lookup.add({"Lookup", trace.value("time", std::string("?")) + "  " + trace.value("process", std::string("?")) +
                            " (pid " + trace.value("pid", json(0)).dump() + ")"});
  std::string program = trace.value("api", std::string("?")) + " " + trace.value("kind", std::string("?"));
  if (!kernels.empty()) {
    std::string names;
    for (const auto& name : kernels) names += (names.empty() ? "" : ", ") + name;
    program += ", kernels " + names;
  }
  lookup.add({"  program", program});
  lookup.add({"  device", trace.value("device", std::string("?"))});
  if (auto label = trace.find("label"); label != trace.end() && label->is_string() && !label->empty()) {
    lookup.add({"  label", label->get<std::string>()});
  }
  lookup.add({"  key", trace.value("key", std::string("?"))});
  lookup.add({"  trace", trace_file.string()});
  std::fputs(lookup.render().c_str(), stdout);
  if (matches.empty()) return;

  const EntryMatch& best = matches.front();
  const std::string best_label = entry_label(best.entry->sidecar);
  std::printf("\nClosest cached entry  %s%s\n", best.entry->key.c_str(),
              best_label.empty() ? "" : ("  (" + best_label + ")").c_str());
  std::printf("  built %s, last used %s ago\n", best.entry->sidecar.value("created", std::string("?")).c_str(),
              format_age_ns(fileops::now_ns() - best.entry->last_access_ns).c_str());
  std::printf("  %s (this lookup vs cached entry):\n", closeness(best).c_str());
  for (const auto& d : best.differences) std::printf("  - %s\n", d.description.c_str());

  if (matches.size() > 1) {
    std::puts("\nAlso close");
    Table others;
    for (std::size_t i = 1; i < matches.size(); ++i) {
      others.add({short_hex(matches[i].entry->key, 16), summarize(matches[i].differences)});
    }
    std::fputs(others.render("  ").c_str(), stdout);
  }
  (void)entry_count;
}

int explain(const ExplainOptions& options) {
  const Settings settings = load_settings();
  fs::path trace_file = options.trace;
  std::string error;
  if (options.last) {
    auto newest = newest_trace(settings.trace_dir, &error);
    if (!newest) return report_error(error);
    trace_file = *newest;
  } else if (trace_file.empty()) {
    return report_error("explain: give a trace file or --last", 2);
  }
  const std::optional<json> trace = read_json_object(trace_file);
  if (!trace) return report_error("explain: " + trace_file.string() + " is not a readable trace (JSON object)");
  if (!trace->contains("components") && trace->value("verdict", std::string()) != "uncacheable") {
    return report_error("explain: " + trace_file.string() + " has no key components: not a BinaryCacheTrace");
  }

  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  if (!store) return report_error(error);
  const std::string key = trace->value("key", std::string());
  std::vector<CachedEntry> entries;
  std::vector<std::string> kernels;
  for (EntryInfo& info : store->list()) {
    if (info.key.hex() == key && info.sidecar.is_object() && info.sidecar.contains("kernel_names")) {
      for (const auto& name : info.sidecar["kernel_names"]) if (name.is_string()) kernels.push_back(name);
    }
    entries.push_back({info.key.hex(), std::move(info.sidecar), info.last_access_ns});
  }
  const json components = trace->value("components", json::object());
  if (kernels.empty() && components.contains("input") && components["input"].contains("value") &&
      components["input"]["value"].contains("text")) {
    kernels = kernel_names_in(components["input"]["value"]["text"].get<std::string>());
  }

  std::string answer = verdict_sentence(*trace);
  const std::string capture = capture_sentence(
      *trace, std::any_of(entries.begin(), entries.end(), [&](const CachedEntry& e) { return e.key == key; }));
  std::vector<EntryMatch> matches;
  if (answer.empty() || trace->value("verdict", std::string()) == "failed") {
    matches = closest_entries(components, kernels, entries, key, std::max<std::size_t>(options.top, 1));
  }
  if (answer.empty()) {
    const std::size_t others = entries.size() - std::count_if(entries.begin(), entries.end(),
                                                              [&](const CachedEntry& e) { return e.key == key; });
    if (!matches.empty()) {
      answer = "miss: " + summarize(matches.front().differences);
    } else if (others == 0) {
      answer = "miss: the cache held no other entry: this program was never built with this cache before";
    } else {
      answer = "miss: no cached entry is close: none of the " + std::to_string(others) +
               " other entries has this program's source or kernel names. It was never built with this cache "
               "before (or its entries were evicted)";
    }
  }

  if (options.json) {
    json closest = json::array();
    for (const auto& match : matches) closest.push_back(match_json(match));
    print_json({{"schema", kJsonSchemaVersion},
                {"trace", trace_file.string()},
                {"verdict", trace->value("verdict", std::string())},
                {"reason", trace->value("reason", std::string())},
                {"key", key},
                {"device", trace->value("device", std::string())},
                {"kernel_names", kernels},
                {"explanation", answer},
                {"capture", capture},
                {"suggestion", matches.empty() ? std::string() : suggestion(matches.front())},
                {"entries_considered", entries.size()},
                {"closest", closest}});
    return 0;
  }
  print_human(trace_file, *trace, kernels, matches, entries.size(), answer, capture);
  return 0;
}

}  // namespace

Command add_explain_command(CLI::App& app) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* cli = app.add_subcommand("explain", "why a lookup missed: what differs from the closest cached entries");
  cli->add_option("trace", options->trace, "a BinaryCacheTrace file (see JITCACHE_TRACE)");
  cli->add_flag("--last", options->last, "the newest trace that was not a hit");
  cli->add_option("--top", options->top, "how many close entries to compare (default 3)");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  return {cli, [options] { return explain(*options); }};
}

}  // namespace jitcache::tool
