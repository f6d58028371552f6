// jitcache warm [--pack P]... [--device S] [--app S] [--used-within D] [--key PREFIX]... [-j N] [--json]:
// rebuilds the recorded programs (store_inputs) for this machine's drivers now, one `jitcache
// replay` child per program and device (capture/replay_jobs.hpp), so that the next run of the
// apps is all hits: after a driver upgrade, on a new machine, in a fresh container. The programs
// come from the local store and, with a remote configured, from the programs other machines
// published there (tools/lib/input_sources.hpp); with --pack, from the recorded inputs of those packs
// instead.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <unistd.h>

#include "core/settings.hpp"
#include "hashing/bounded_json.hpp"
#include "store/files/file_ops.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/captures.hpp"
#include "tools/lib/input_sources.hpp"
#include "capture/replay_jobs.hpp"
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

bool selected(const RecordedProgram& program, const WarmOptions& options, std::int64_t used_after_ns) {
  if (!options.keys.empty()) {
    bool any = false;
    for (const std::string& prefix : options.keys) any = any || program.key.rfind(prefix, 0) == 0;
    if (!any) return false;
  }
  if (!options.device.empty() && program.device.find(options.device) == std::string::npos) return false;
  if (!options.app.empty() && program.created_by.find(options.app) == std::string::npos) return false;
  return program.used_ns >= used_after_ns;
}

// One job per recorded program and device; the most recently used entry speaks for the group,
// and the first source that has the group (the local store) keeps it.
struct Program {
  RecordedProgram newest;
  std::vector<std::string> keys;
};

struct Tally {
  std::size_t built = 0, already_warm = 0, no_device = 0, failed = 0;
};

void show_progress(const Tally& tally, std::size_t total) {
  std::fprintf(stderr, "\rjitcache warm: %zu/%zu  built %zu, already warm %zu, failed %zu ",
               tally.built + tally.already_warm + tally.no_device + tally.failed, total, tally.built,
               tally.already_warm, tally.failed);
  std::fflush(stderr);
}

ReplayJob job_for(const Program& program, unsigned time_limit_s) {
  ReplayJob job;
  job.arguments = {"--inputs", program.newest.inputs, "--device-digest", program.newest.device_digest,
                   "--time-limit", std::to_string(time_limit_s)};
  for (const auto& [name, digest] : program.newest.components.items()) {
    if (digest.is_string()) job.arguments.push_back("--component=" + name + "=" + digest.get<std::string>());
  }
  job.context = {{"inputs", program.newest.inputs}, {"device", program.newest.device},
                 {"source", program.newest.source}, {"recorded_keys", program.keys}};
  return job;
}

int warm(const WarmOptions& options) {
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<InputSource> remote, packs;
  if (options.packs.empty()) {
    remote = remote_source(settings, &error);
    if (!remote && !error.empty()) return report_error("remote: " + error);
  } else {
    std::string paths;
    // Named on the command line: relative to where the user typed it (JITCACHE_PACKS must be absolute).
    for (const std::string& path : options.packs) {
      std::error_code ignored;
      paths += (paths.empty() ? "" : ":") + std::filesystem::absolute(path, ignored).lexically_normal().string();
    }
    packs = pack_source(paths, settings, &error);
    if (!packs) return report_error(error);
  }
  // Records fetched from the remote or a pack go to the local store, where the replay reads them.
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/remote || packs, &error);
  if (!store) return report_error(error);
  note_captures_in_flight(*store);  // on stderr: their keys are not in the store yet
  std::int64_t used_after_ns = INT64_MIN;
  if (!options.used_within.empty()) {
    std::optional<std::uint64_t> seconds = parse_duration_s(options.used_within);
    if (!seconds) return report_error("--used-within: not a duration: " + options.used_within, 2);
    used_after_ns = fileops::now_ns() - static_cast<std::int64_t>(std::min<std::uint64_t>(*seconds, 1ull << 32)) * 1000000000;
  }

  std::vector<std::unique_ptr<InputSource>> sources;
  if (packs) {
    sources.push_back(std::move(packs));
  } else {
    sources.push_back(local_source(*store));
    if (remote) sources.push_back(std::move(remote));
  }
  std::map<std::pair<std::string, std::string>, Program> programs;
  std::vector<Unusable> unusable;
  nlohmann::json source_errors = nlohmann::json::array();
  for (const auto& source : sources) {
    std::vector<RecordedProgram> listed;
    if (std::string stopped = source->programs(&listed, &unusable); !stopped.empty()) source_errors.push_back(stopped);
    std::set<std::pair<std::string, std::string>> mine;
    for (RecordedProgram& recorded : listed) {
      // A pack records no use: --used-within selects among the store's and the remote's programs.
      if (!selected(recorded, options, options.packs.empty() ? used_after_ns : INT64_MIN)) continue;
      std::pair<std::string, std::string> id{recorded.inputs, recorded.device_digest};
      auto [it, added] = programs.try_emplace(id);
      if (!added && !mine.count(id)) continue;  // an earlier source has it
      mine.insert(id);
      Program& program = it->second;
      program.keys.push_back(recorded.key);
      if (added || recorded.used_ns > program.newest.used_ns) program.newest = std::move(recorded);
    }
  }

  const bool progress = !options.json && ::isatty(STDERR_FILENO);
  Tally tally;
  nlohmann::json results = nlohmann::json::array();
  auto finished = [&](const nlohmann::json& context, const nlohmann::json& result) {
    const std::string outcome = string_member(result, "outcome");
    const bool known = outcome == "built" || outcome == "already_warm" || outcome == "no_device";
    if (outcome == "built") ++tally.built;
    else if (outcome == "already_warm") ++tally.already_warm;
    else if (outcome == "no_device") ++tally.no_device;
    else ++tally.failed;
    nlohmann::json row = context;
    row["outcome"] = known ? outcome : "failed";
    row["key"] = string_member(result, "key");
    row["reason"] = string_member(result, "reason");
    results.push_back(std::move(row));
  };
  // The input record must be in the local store before its replay: the first source that has it.
  // Why none did names the program's own source and those after it (a remote program's record
  // is not expected in the local store).
  std::vector<ReplayJob> jobs;
  for (const auto& [id, program] : programs) {
    ReplayJob job = job_for(program, options.time_limit_s);
    std::string missing;
    bool expected = false;
    std::optional<Digest128> digest = Digest128::from_hex(id.first);
    for (const auto& source : sources) {
      expected = expected || program.newest.source == source->name();
      std::string why = digest ? source->provide(*digest, *store) : "not a digest";
      if (why.empty()) {
        missing.clear();
        break;
      }
      if (expected) missing += (missing.empty() ? "" : "; ") + why;
    }
    if (missing.empty()) jobs.push_back(std::move(job));
    else finished(job.context, {{"outcome", "failed"}, {"reason", missing}});
  }
  store.reset();

  const std::size_t total = programs.size();
  run_replay_jobs(jobs, options.jobs, !options.verbose, [&](const ReplayJob& job, const nlohmann::json& result) {
    finished(job.context, result);
    if (progress) show_progress(tally, total);
  });
  if (progress) std::fputs("\n", stderr);

  nlohmann::json not_replayable = nlohmann::json::array();
  for (const Unusable& entry : unusable) {
    not_replayable.push_back({{"source", entry.source}, {"key", entry.name}, {"reason", entry.reason}});
  }
  if (options.json) {
    print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"programs", total},
                {"built", tally.built}, {"already_warm", tally.already_warm}, {"no_device", tally.no_device},
                {"failed", tally.failed},
                {"not_replayable", not_replayable}, {"source_errors", source_errors}, {"results", results}});
  } else {
    std::printf("%zu recorded program(s): %zu built, %zu already warm, %zu for devices not here, %zu failed; "
                "%zu entr%s or record%s not replayable\n",
                total, tally.built, tally.already_warm, tally.no_device, tally.failed, not_replayable.size(),
                not_replayable.size() == 1 ? "y" : "ies", not_replayable.size() == 1 ? "" : "s");
    for (const nlohmann::json& row : results) {
      if (row["outcome"] != "failed") continue;
      std::printf("  failed: %s (%s) on %s: %s\n", row["inputs"].get<std::string>().substr(0, 12).c_str(),
                  row["source"].get<std::string>().c_str(), row["device"].get<std::string>().c_str(),
                  row["reason"].get<std::string>().c_str());
    }
    for (const Unusable& entry : unusable) {
      if (entry.source != "local") std::printf("  refused: %s: %s\n", entry.name.c_str(), entry.reason.c_str());
    }
    for (const nlohmann::json& stopped : source_errors) std::printf("  %s\n", stopped.get<std::string>().c_str());
  }
  return tally.failed == 0 && source_errors.empty() ? 0 : 1;
}

}  // namespace

Command add_warm_command(CLI::App& app) {
  auto options = std::make_shared<WarmOptions>();
  CLI::App* cli = app.add_subcommand(
      "warm", "rebuild recorded programs (local store and remote) for this machine's drivers now (store_inputs)");
  cli->add_option("--device", options->device, "only entries whose device name contains this");
  cli->add_option("--app", options->app, "only entries stored by an executable whose path contains this");
  cli->add_option("--used-within", options->used_within,
                  "only entries used (remote: published) within this long, e.g. 7d");
  cli->add_option("--key", options->keys, "only entries whose key starts with this (repeatable)");
  cli->add_option("--pack", options->packs,
                  "rebuild the programs of this pack (file or folder; repeatable) from the inputs it carries, "
                  "instead of the store's and the remote's");
  cli->add_option("-j,--jobs", options->jobs, "rebuild this many programs at once (default 2)")
      ->check(CLI::Range(1u, 256u));
  cli->add_option("--time-limit", options->time_limit_s, "stop a program's rebuild after this many seconds (default 600)");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  cli->add_flag("--verbose", options->verbose, "show the drivers' own output");
  return {cli, [options] { return warm(*options); }};
}

}  // namespace jitcache::tool
