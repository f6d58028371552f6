// jitcache warm [--pack P]... [--device S] [--app S] [--used-within D] [--key PREFIX]... [-j N] [--json]:
// rebuilds the recorded programs (store_inputs) for this machine's drivers now, one `jitcache
// replay` child per program and device (tools/lib/replay_jobs.hpp), so that the next run of the
// apps is all hits: after a driver upgrade, on a new machine, in a fresh container. --pack: the
// programs of a pack, from the recorded inputs it carries (tools/lib/recorded_input_source.hpp).
#include <cstdio>
#include <map>
#include <memory>

#include <unistd.h>

#include "core/settings.hpp"
#include "store/file_ops.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/recorded_input_source.hpp"
#include "tools/lib/replay_jobs.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

struct WarmOptions {
  std::string device;
  std::string app;
  std::string used_within;
  std::vector<std::string> keys;
  std::vector<std::string> packs;  // --pack: warm these packs' programs instead of the store's
  unsigned jobs = 2;
  unsigned time_limit_s = 600;
  bool json = false;
  bool verbose = false;
};

std::string text_at(const nlohmann::json& object, const char* name) {
  if (!object.is_object()) return {};
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string device_digest(const nlohmann::json& sidecar) {
  if (!sidecar.is_object()) return {};
  auto components = sidecar.find("components");
  if (components == sidecar.end() || !components->is_object()) return {};
  auto device = components->find("device");
  return device == components->end() ? std::string() : text_at(*device, "digest");
}

bool selected(const EntryInfo& entry, const WarmOptions& options, std::int64_t used_after_ns) {
  const std::string hex = entry.key.hex();
  if (!options.keys.empty()) {
    bool any = false;
    for (const std::string& prefix : options.keys) any = any || hex.rfind(prefix, 0) == 0;
    if (!any) return false;
  }
  if (!options.device.empty() && text_at(entry.sidecar, "device").find(options.device) == std::string::npos) return false;
  if (!options.app.empty() && text_at(entry.sidecar, "created_by").find(options.app) == std::string::npos) return false;
  return entry.last_access_ns >= used_after_ns;
}

// One job per recorded program and device; the most recently used entry speaks for the group.
struct Program {
  EntryInfo newest;
  std::vector<std::string> keys;
};

struct Tally {
  std::size_t built = 0, already_warm = 0, failed = 0;
};

void show_progress(const Tally& tally, std::size_t total) {
  std::fprintf(stderr, "\rjitcache warm: %zu/%zu  built %zu, already warm %zu, failed %zu ",
               tally.built + tally.already_warm + tally.failed, total, tally.built, tally.already_warm, tally.failed);
  std::fflush(stderr);
}

// The entries of the packs given with --pack, read and checked like a lookup; a pack that carries
// no recorded inputs (stripped) is named in `without_inputs`. nullopt + `error` when a pack cannot
// be opened.
std::optional<std::vector<EntryInfo>> pack_entries(const WarmOptions& options, const Settings& settings,
                                                   std::vector<std::string>* without_inputs, std::string* error) {
  std::vector<std::string> warnings;
  RecordedInputSource source(nullptr, join_pack_paths(options.packs), settings.pack_keys, &warnings);
  if (!warnings.empty()) {
    *error = warnings.front();
    return std::nullopt;
  }
  std::vector<EntryInfo> entries;
  for (const auto& pack : source.packs()) {
    if (pack->input_count() == 0) without_inputs->push_back(pack->path().string());
    for (std::size_t i = 0; i < pack->entry_count(); ++i) {
      const pack::IndexRecord record = pack->record(i);
      LoadResult loaded = pack->load_record(record);
      if (loaded.status != LoadStatus::hit) continue;  // `jitcache pack verify` names it
      entries.push_back({record.key, record.binary_size + record.sidecar_size, 0, std::move(loaded.sidecar)});
    }
  }
  return entries;
}

int warm(const WarmOptions& options) {
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  if (!store) return report_error(error);
  std::vector<std::string> without_inputs;  // packs that carry no recorded inputs
  std::optional<std::vector<EntryInfo>> from_packs;
  if (!options.packs.empty()) {
    from_packs = pack_entries(options, settings, &without_inputs, &error);
    if (!from_packs) return report_error(error);
  }
  std::int64_t used_after_ns = INT64_MIN;
  if (!options.used_within.empty()) {
    std::optional<std::uint64_t> seconds = parse_duration_s(options.used_within);
    if (!seconds) return report_error("--used-within: not a duration: " + options.used_within, 2);
    used_after_ns = fileops::now_ns() - static_cast<std::int64_t>(std::min<std::uint64_t>(*seconds, 1ull << 32)) * 1000000000;
  }

  std::map<std::pair<std::string, std::string>, Program> programs;
  nlohmann::json not_replayable = nlohmann::json::array();
  for (EntryInfo& entry : from_packs ? std::move(*from_packs) : store->list()) {
    if (!selected(entry, options, from_packs ? INT64_MIN : used_after_ns)) continue;
    const std::string inputs = text_at(entry.sidecar, "inputs");
    const std::string device = device_digest(entry.sidecar);
    if (inputs.empty() || device.empty()) {
      std::string why = text_at(entry.sidecar, "inputs_not_recorded");
      if (from_packs && why.empty()) why = "the pack entry names no recorded inputs (a stripped pack)";
      not_replayable.push_back({{"key", entry.key.hex()},
                                {"reason", why.empty() ? "no recorded inputs (store_inputs was 0, or an older jitcache stored it)"
                                                       : "inputs not recorded: " + why}});
      continue;
    }
    Program& program = programs[{inputs, device}];
    program.keys.push_back(entry.key.hex());
    if (program.keys.size() == 1 || entry.last_access_ns > program.newest.last_access_ns) program.newest = std::move(entry);
  }
  store.reset();

  std::vector<ReplayJob> jobs;
  for (const auto& [id, program] : programs) {
    ReplayJob job;
    job.arguments = {"--inputs", id.first, "--device-digest", id.second, "--entry", program.newest.key.hex(),
                     "--time-limit", std::to_string(options.time_limit_s)};
    for (const std::string& pack : options.packs) job.arguments.insert(job.arguments.end(), {"--pack", pack});
    job.context = {{"inputs", id.first}, {"device", text_at(program.newest.sidecar, "device")},
                   {"recorded_keys", program.keys}};
    jobs.push_back(std::move(job));
  }

  const bool progress = !options.json && ::isatty(STDERR_FILENO);
  Tally tally;
  nlohmann::json results = nlohmann::json::array();
  run_replay_jobs(jobs, options.jobs, !options.verbose, [&](const ReplayJob& job, const nlohmann::json& result) {
    const std::string outcome = text_at(result, "outcome");
    if (outcome == "built") ++tally.built;
    else if (outcome == "already_warm") ++tally.already_warm;
    else ++tally.failed;
    nlohmann::json row = job.context;
    row["outcome"] = outcome == "built" || outcome == "already_warm" ? outcome : "failed";
    row["key"] = text_at(result, "key");
    row["reason"] = text_at(result, "reason");
    results.push_back(std::move(row));
    if (progress) show_progress(tally, jobs.size());
  });
  if (progress) std::fputs("\n", stderr);

  if (options.json) {
    print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"programs", jobs.size()},
                {"built", tally.built}, {"already_warm", tally.already_warm}, {"failed", tally.failed},
                {"not_replayable", not_replayable}, {"results", results}, {"packs", options.packs},
                {"packs_without_inputs", without_inputs}});
  } else {
    for (const std::string& pack : without_inputs) {
      std::printf("%s carries no recorded inputs (stripped, or made from a store without them): its programs "
                  "cannot be rebuilt here\n", pack.c_str());
    }
    std::printf("%zu recorded program(s): %zu built, %zu already warm, %zu failed; %zu entr%s without recorded inputs\n",
                jobs.size(), tally.built, tally.already_warm, tally.failed, not_replayable.size(),
                not_replayable.size() == 1 ? "y" : "ies");
    for (const nlohmann::json& row : results) {
      if (row["outcome"] != "failed") continue;
      std::printf("  failed: %s on %s: %s\n", row["inputs"].get<std::string>().substr(0, 12).c_str(),
                  row["device"].get<std::string>().c_str(), row["reason"].get<std::string>().c_str());
    }
  }
  // Asked to warm a pack and nothing in it can be: that is a failure the caller must see.
  return tally.failed == 0 && (options.packs.empty() || !jobs.empty()) ? 0 : 1;
}

}  // namespace

Command add_warm_command(CLI::App& app) {
  auto options = std::make_shared<WarmOptions>();
  CLI::App* cli = app.add_subcommand("warm", "rebuild recorded programs (the store's, or a pack's with --pack) for this machine's drivers now");
  cli->add_option("--device", options->device, "only entries whose device name contains this");
  cli->add_option("--app", options->app, "only entries stored by an executable whose path contains this");
  cli->add_option("--used-within", options->used_within, "only entries used within this long, e.g. 7d");
  cli->add_option("--key", options->keys, "only entries whose key starts with this (repeatable)");
  cli->add_option("--pack", options->packs,
                  "rebuild the programs of this pack (file or folder; repeatable) from the inputs it carries");
  cli->add_option("-j,--jobs", options->jobs, "rebuild this many programs at once (default 2)")
      ->check(CLI::Range(1u, 256u));
  cli->add_option("--time-limit", options->time_limit_s, "stop a program's rebuild after this many seconds (default 600)");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  cli->add_flag("--verbose", options->verbose, "show the drivers' own output");
  return {cli, [options] { return warm(*options); }};
}

}  // namespace jitcache::tool
