#include "tools/lib/input_sources.hpp"

#include <set>

#include "core/remote_tier.hpp"
#include "hashing/bounded_json.hpp"
#include "store/pack/pack_set.hpp"
#include "store/remote/remote_programs.hpp"
#include "store/tiers/tiers.hpp"

namespace jitcache::tool {
namespace {

// A recorded entry as warm lists it, from its sidecar: "" or why it cannot be replayed.
std::string recorded_program_of(const char* source, const std::string& key, const nlohmann::json& sidecar,
                                std::int64_t used_ns, RecordedProgram* program) {
  program->source = source;
  program->key = key;
  program->inputs = string_member(sidecar, "inputs");
  program->device = string_member(sidecar, "device");
  program->created_by = string_member(sidecar, "created_by");
  program->used_ns = used_ns;
  program->components = nlohmann::json::object();
  if (auto all = sidecar.find("components"); all != sidecar.end() && all->is_object()) {
    for (const auto& [component, value] : all->items()) {
      if (std::string digest = string_member(value, "digest"); !digest.empty()) program->components[component] = digest;
    }
  }
  program->device_digest = string_member(program->components, "device");
  if (!program->inputs.empty() && !program->device_digest.empty()) return {};
  std::string why = string_member(sidecar, "inputs_not_recorded");
  return why.empty() ? "no recorded inputs (store_inputs was 0, or an older jitcache stored it)"
                     : "inputs not recorded: " + why;
}

class LocalSource : public InputSource {
 public:
  explicit LocalSource(DiskStore& store) : store_(store) {}
  const char* name() const override { return "local"; }

  std::string programs(std::vector<RecordedProgram>* programs, std::vector<Unusable>* unusable) override {
    for (EntryInfo& entry : store_.list()) {
      RecordedProgram program;
      if (std::string why = recorded_program_of(name(), entry.key.hex(), entry.sidecar, entry.last_access_ns, &program);
          !why.empty()) {
        unusable->push_back({name(), program.key, why});
        continue;
      }
      programs->push_back(std::move(program));
    }
    return {};
  }

  std::string provide(const Digest128& digest, DiskStore& store) override {
    LoadResult record = store.load_inputs(digest);
    if (record.status == LoadStatus::hit) return {};
    return record.status == LoadStatus::miss ? "its recorded inputs are gone from the store" : record.reason;
  }

 private:
  DiskStore& store_;
};

// `warm --pack`: the programs of packs that carry their recorded inputs (docs/pack-format.md),
// read with the pack tier's rules (trust, signature, per-entry checksums). A record is copied into
// the local store, where the replay reads it, after the same checks the store applies to its own.
class PackSource : public InputSource {
 public:
  explicit PackSource(std::unique_ptr<PackSet> packs) : packs_(std::move(packs)) {}
  const char* name() const override { return "pack"; }

  std::string programs(std::vector<RecordedProgram>* programs, std::vector<Unusable>* unusable) override {
    std::string without_inputs;
    for (const auto& pack : packs_->packs()) {
      if (pack->input_count() == 0) {
        without_inputs += (without_inputs.empty() ? "" : "; ") + pack->path().string() +
                          " carries no recorded inputs (stripped, or made from a store without them): its "
                          "programs cannot be rebuilt here";
      }
      for (std::size_t i = 0; i < pack->entry_count(); ++i) {
        const pack::IndexRecord record = pack->record(i);
        LoadResult loaded = pack->load_record(record);
        if (loaded.status != LoadStatus::hit) {
          unusable->push_back({pack->path().string(), record.key.hex(), "entry refused: " + loaded.reason});
          continue;
        }
        RecordedProgram program;
        if (std::string why = recorded_program_of(name(), record.key.hex(), loaded.sidecar, 0, &program); !why.empty()) {
          unusable->push_back({pack->path().string(), program.key, why});
          continue;
        }
        programs->push_back(std::move(program));
      }
    }
    return without_inputs;
  }

  std::string provide(const Digest128& digest, DiskStore& store) override {
    std::string refused;
    for (const auto& pack : packs_->packs()) {
      LoadResult record = pack->load_input(digest);
      if (record.status == LoadStatus::miss) continue;
      if (record.status != LoadStatus::hit) {
        refused = pack->path().string() + ": input record refused: " + record.reason;
        continue;
      }
      Digest128 saved_as;
      SaveResult saved = store.save_inputs(record.binary, &saved_as);
      if (saved.status != SaveStatus::stored) return "the local store refused the pack's input record: " + saved.reason;
      return saved_as == digest ? std::string() : "the pack's input record was stored under another name";
    }
    return refused.empty() ? "no pack carries the input record " + digest.hex() : refused;
  }

 private:
  std::unique_ptr<PackSet> packs_;
};

class RemoteSource : public InputSource {
 public:
  explicit RemoteSource(std::vector<RemoteConfig> configs) {
    for (RemoteConfig& config : configs) remotes_.push_back(open_remote(std::move(config)));
  }
  const char* name() const override { return "remote"; }

  std::string programs(std::vector<RecordedProgram>* programs, std::vector<Unusable>* unusable) override {
    std::string problems;
    std::set<std::string> seen;  // a program on several remotes is listed once (the first's)
    for (const std::unique_ptr<RemoteClient>& remote : remotes_) {
      RemoteListing listing;
      RemoteResult listed = remote->list_programs(&listing);
      for (const RemoteRefusal& refusal : listing.refused) unusable->push_back({name(), refusal.name, refusal.reason});
      for (RemoteProgram& found : listing.programs) {
        if (!seen.insert(found.key.hex()).second) continue;
        const nlohmann::json& summary = found.summary;
        RecordedProgram program;
        program.source = name();
        program.key = found.key.hex();
        program.inputs = string_member(summary, "inputs");
        program.device_digest = string_member(summary, "device_digest");
        program.device = string_member(summary, "device");
        program.created_by = string_member(summary, "created_by");
        program.used_ns = summary["published"].get<std::int64_t>() * 1000000000;
        program.components = summary["components"];
        programs->push_back(std::move(program));
      }
      std::string problem;
      if (listed.status != RemoteStatus::ok) problem = std::string("remote: ") + to_string(listed.status) + ": " + listed.reason;
      else if (!listing.complete) problem = "remote: the listing stopped after " + std::to_string(kMaxProgramListingCalls) + " SCAN calls";
      if (!problem.empty()) problems += (problems.empty() ? "" : "; ") + problem;
    }
    return problems;
  }

  std::string provide(const Digest128& digest, DiskStore& store) override {
    RemoteResult fetched;
    for (const std::unique_ptr<RemoteClient>& remote : remotes_) {
      fetched = remote->fetch_inputs(digest);
      if (fetched.status == RemoteStatus::ok) break;
    }
    if (fetched.status == RemoteStatus::miss) return "remote: no input record " + digest.hex() + " on the server";
    if (fetched.status != RemoteStatus::ok) {
      return std::string("remote input record refused: ") + to_string(fetched.status) + ": " + fetched.reason;
    }
    Digest128 saved_as;
    SaveResult saved = store.save_inputs(fetched.binary, &saved_as);
    if (saved.status != SaveStatus::stored) return "the local store refused the fetched input record: " + saved.reason;
    return saved_as == digest ? std::string() : "the fetched input record was stored under another name";
  }

 private:
  std::vector<std::unique_ptr<RemoteClient>> remotes_;  // Redis, HTTP or a shared directory
};

}  // namespace

std::unique_ptr<InputSource> local_source(DiskStore& store) { return std::make_unique<LocalSource>(store); }

std::unique_ptr<InputSource> pack_source(const std::string& paths, const Settings& settings, std::string* why) {
  std::vector<std::string> warnings;
  std::unique_ptr<PackSet> packs = PackSet::open(paths, load_pack_trust(settings.pack_keys, &warnings), &warnings);
  if (!warnings.empty()) {
    *why = warnings.front();
    return nullptr;
  }
  return std::make_unique<PackSource>(std::move(packs));
}

std::unique_ptr<InputSource> remote_source(const Settings& settings, std::string* why) {
  if (settings.remote.empty()) return nullptr;
  std::vector<RemoteConfig> configs;
  bool read_only = false;
  std::chrono::milliseconds lease_wait{0};
  std::string problem = remote_configs_from(settings, linked_tiers().remote_schemes(), &configs, &read_only, &lease_wait);
  if (configs.empty()) {
    *why = problem;
    return nullptr;
  }
  return std::make_unique<RemoteSource>(std::move(configs));
}

}  // namespace jitcache::tool
