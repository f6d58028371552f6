// jitcache pack create|ls|show|verify|import|merge|strip|sign: portable, read-only cache packs
// (docs/pack-format.md). The tool only drives store/'s pack writer and reader; the engine serves
// packs through JITCACHE_PACKS.
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "core/settings.hpp"
#include "hashing/recorded_inputs.hpp"
#include "store/files/user_path.hpp"
#include "store/local/entry_check.hpp"
#include "store/pack/pack_members.hpp"
#include "store/pack/pack_reader.hpp"
#include "store/pack/pack_set.hpp"
#include "store/pack/pack_writer.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/captures.hpp"
#include "tools/lib/entry_view.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/pack_transform.hpp"
#include "tools/lib/progress.hpp"
#include "tools/lib/tool_store.hpp"
#include "tools/lib/version.hpp"

namespace jitcache::tool {
namespace {

// Bounds on what the tool reads from files the user names: a key list of 100 000 keys, a PEM key.
constexpr std::uint64_t kMaxKeyListBytes = 8u << 20;
constexpr std::uint64_t kMaxKeyFileBytes = 64u << 10;

struct PackOptions {
  bool json = false;
  std::string output;
  std::vector<std::string> packs;  // inputs
  std::string pack;                // the one input of ls, show, strip, sign
  std::string key;                 // show: one entry
  std::string sign_key;            // --sign / sign --key
  bool strip = false;
  bool obfuscate = false;
  PackFilter filter;
  std::string since, keys_from;
  bool no_wait = false;   // create: do not wait for captures in flight
  std::string wait;       // create: how long to wait for them (default: capture_wait)
};

// The tool reads any pack it is given; trust applies when the consumer setting lists keys.
std::unique_ptr<PackReader> open_pack(const std::string& path, std::string* error) {
  std::vector<std::string> warnings;
  const PackTrust trust = load_pack_trust(load_settings().pack_keys, &warnings);
  for (const std::string& warning : warnings) std::fprintf(stderr, "jitcache: warning: %s\n", warning.c_str());
  return PackReader::open(path, trust, error);
}

using UseEntry = std::function<void(const std::string& path, const pack::IndexRecord&, LoadResult&)>;
using UseInput = std::function<void(const std::string& path, const pack::InputIndexRecord&, LoadResult&)>;

// Every entry of `packs` that passes the full check (the index's checksums of sidecar and binary,
// and the XXH3-64), in index order, then every recorded-inputs record that passes its check (its
// checksum, its name), for import and merge; a refused one is left out with a warning and counted.
// False with `error` set when a pack cannot be opened.
bool for_each_checked_entry(const std::vector<std::string>& packs, const std::string& activity, std::size_t* refused,
                            const UseEntry& use, const UseInput& use_input, std::string* error) {
  for (const std::string& path : packs) {
    std::unique_ptr<PackReader> pack = open_pack(path, error);
    if (!pack) return false;
    Progress progress(activity + " " + path);
    for (std::size_t i = 0; i < pack->entry_count(); ++i) {
      progress(i + 1, pack->entry_count());
      const pack::IndexRecord record = pack->record(i);
      LoadResult loaded = pack->load_record(record, /*full_check=*/true);
      if (loaded.status != LoadStatus::hit) {
        ++*refused;
        std::fprintf(stderr, "jitcache: warning: %s: entry left out: %s\n", path.c_str(), loaded.reason.c_str());
        continue;
      }
      use(path, record, loaded);
    }
    for (std::size_t i = 0; use_input && i < pack->input_count(); ++i) {
      const pack::InputIndexRecord row = pack->input_record(i);
      LoadResult loaded = pack->load_input_record(row);
      if (loaded.status != LoadStatus::hit) {
        ++*refused;
        std::fprintf(stderr, "jitcache: warning: %s: inputs record left out: %s\n", path.c_str(), loaded.reason.c_str());
        continue;
      }
      use_input(path, row, loaded);
    }
  }
  return true;
}

// The recorded-inputs record a sidecar names ("inputs"), if any.
std::optional<Digest128> named_inputs(const nlohmann::json& sidecar) {
  auto it = sidecar.find("inputs");
  if (it == sidecar.end() || !it->is_string()) return std::nullopt;
  return Digest128::from_hex(it->get_ref<const std::string&>());
}

std::string read_key_file(const std::string& path) {
  std::string text, error;
  if (!read_user_file(path, kMaxKeyFileBytes, &text, &error)) throw std::runtime_error("cannot read key file: " + error);
  return text;
}

PackWriteOptions write_options(const PackOptions& options, const std::string& command) {
  PackWriteOptions write;
  write.producer = "jitcache " + version_info().value("version", std::string("?")) + " pack " + command;
  if (!options.sign_key.empty()) write.signing_key_pem = read_key_file(options.sign_key);
  write.extra_manifest["stripped"] = options.strip || options.obfuscate;
  write.extra_manifest["obfuscated"] = options.obfuscate;
  return write;
}

void transform(const PackOptions& options, nlohmann::json* sidecar) {
  if (options.obfuscate) obfuscate_sidecar(sidecar);
  else if (options.strip) strip_sidecar(sidecar);
}

std::string label_of(const nlohmann::json& sidecar) {
  auto it = sidecar.find("label");
  return it != sidecar.end() && it->is_string() ? it->get<std::string>() : std::string();
}

nlohmann::json written_json(const std::string& path, std::size_t entries, const nlohmann::json& extra = {}) {
  nlohmann::json out = {{"schema", kJsonSchemaVersion}, {"pack", path}, {"entries", entries}};
  std::error_code ec;
  out["bytes"] = std::filesystem::file_size(path, ec);
  for (const auto& [name, value] : extra.items()) out[name] = value;
  return out;
}

int finish_write(const PackOptions& options, const std::vector<PackEntry>& /*unused*/, std::size_t count,
                 const nlohmann::json& extra) {
  nlohmann::json out = written_json(options.output, count, extra);
  out["signed"] = !options.sign_key.empty();
  if (options.json) {
    print_json(out);
  } else {
    const std::size_t records = out.value("input_records", std::size_t{0});
    std::printf("Wrote %s: %zu entries, %zu recorded input%s, %s%s\n", options.output.c_str(), count, records,
                records == 1 ? "" : "s", format_size(out["bytes"].get<std::uint64_t>()).c_str(),
                options.sign_key.empty() ? "" : ", signed");
  }
  return 0;
}

int create(PackOptions options) {
  std::optional<std::string> since = since_time(options.since);
  if (!since) return report_error("--since: neither a duration (7d) nor an ISO-8601 time: " + options.since, 2);
  options.filter.since = *since;
  if (!options.keys_from.empty()) {
    std::string text, error;
    if (!read_user_file(options.keys_from, kMaxKeyListBytes, &text, &error)) return report_error("--keys-from: " + error, 2);
    std::istringstream in(text);
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (line.empty() || line[0] == '#') continue;
      std::optional<Digest128> key = Digest128::from_hex(line.substr(0, 32));
      // The line number, not the line: the file may be one this user could not otherwise read.
      if (!key) return report_error(options.keys_from + ": line " + std::to_string(number) + " is not a key", 2);
      options.filter.keys.push_back(*key);
    }
    if (options.filter.keys.empty()) return report_error(options.keys_from + " lists no key", 2);
  }
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  if (!store) return report_error(error);
  // A pack made right after an app run holds what that run built: its helpers' entries included.
  std::optional<std::uint64_t> wait_s = options.wait.empty() ? settings.capture_wait_s : parse_duration_s(options.wait);
  if (!wait_s) return report_error("--wait: not a duration: '" + options.wait + "'", 2);
  const std::size_t in_flight = options.no_wait ? store->captures_in_flight()
                                                : wait_for_captures(*store, std::chrono::seconds(*wait_s));
  if (in_flight > 0) {
    std::fprintf(stderr, "jitcache: warning: %s; the pack lacks them%s\n", in_flight_note(in_flight).c_str(),
                 options.no_wait ? " (--no-wait)" : "");
  }
  std::vector<PackEntry> entries;
  std::map<Digest128, std::string> inputs;  // the records the entries name, once each
  std::size_t skipped = 0, inputs_missing = 0;
  const bool with_inputs = !options.strip && !options.obfuscate;
  {
    Progress progress("reading");
    const std::vector<EntryInfo> listed = store->list_summaries(std::ref(progress));  // the filter reads summary fields
    for (std::size_t i = 0; i < listed.size(); ++i) {
      progress(i + 1, listed.size());
      if (!matches(options.filter, listed[i].key, listed[i].sidecar)) continue;
      LoadResult loaded = store->load(listed[i].key);  // checks the entry again
      if (loaded.status != LoadStatus::hit) {
        ++skipped;
        continue;
      }
      if (std::optional<Digest128> digest = named_inputs(loaded.sidecar); digest && with_inputs && !inputs.count(*digest)) {
        LoadResult record = store->load_inputs(*digest);  // checked against its name
        if (record.status == LoadStatus::hit) inputs.emplace(*digest, std::move(record.binary));
        else ++inputs_missing;
      }
      transform(options, &loaded.sidecar);
      entries.push_back({listed[i].key, std::move(loaded.sidecar), std::move(loaded.binary)});
    }
  }
  const std::size_t count = entries.size();
  std::vector<PackInput> records;
  for (auto& [digest, bytes] : inputs) records.push_back({digest, std::move(bytes)});
  const std::size_t record_count = records.size();
  Progress progress("writing");
  PackWriteOptions write = write_options(options, "create");
  write.progress = std::ref(progress);
  if (!write_pack(options.output, entries, records, write, &error)) return report_error(error);
  return finish_write(options, {}, count,
                      {{"skipped_unreadable", skipped}, {"input_records", record_count}, {"inputs_missing", inputs_missing},
                       {"captures_in_flight", in_flight}});
}

// "3 recorded inputs (12.0 KiB)", or why there are none (and what that means for `warm --pack`).
std::string inputs_summary(const PackReader& pack) {
  if (pack.input_count() == 0) {
    return "no recorded inputs (stripped, or made from a store without them): `jitcache warm --pack` cannot rebuild its programs";
  }
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < pack.input_count(); ++i) bytes += pack.input_record(i).size;
  return std::to_string(pack.input_count()) + " recorded input" + (pack.input_count() == 1 ? "" : "s") + " (" +
         format_size(bytes) + ")";
}

nlohmann::json signature_json(const PackReader& pack) {
  if (!pack.signer()) return {{"signed", false}};
  return {{"signed", true}, {"algorithm", "ed25519"}, {"public_key", pack.signer()->hex()}};
}

int list(const PackOptions& options) {
  std::string error;
  std::unique_ptr<PackReader> pack = open_pack(options.packs.at(0), &error);
  if (!pack) return report_error(error);
  nlohmann::json list = nlohmann::json::array();
  Table table({"KEY", "SIZE", "LABEL", "KIND", "DEVICE", "KERNELS"}, {1});
  std::size_t refused = 0;
  for (std::size_t i = 0; i < pack->entry_count(); ++i) {
    const pack::IndexRecord record = pack->record(i);
    LoadResult loaded = pack->load_record(record);
    if (loaded.status != LoadStatus::hit) {
      ++refused;
      list.push_back({{"key", record.key.hex()}, {"refused", loaded.reason}});
      table.add({record.key.hex(), format_size(record.binary_size), "", "REFUSED: " + loaded.reason});
      continue;
    }
    const nlohmann::json& sidecar = loaded.sidecar;
    const std::string device = sidecar.value("device", std::string("?"));
    const std::optional<Digest128> inputs = named_inputs(sidecar);
    list.push_back({{"key", record.key.hex()}, {"binary_size", record.binary_size}, {"label", label_of(sidecar)},
                    {"api", sidecar.value("api", "")}, {"kind", sidecar.value("kind", "")}, {"device", device},
                    {"kernel_names", sidecar.value("kernel_names", nlohmann::json::array())},
                    {"inputs", inputs ? inputs->hex() : ""}});
    table.add({record.key.hex(), format_size(record.binary_size), label_of(sidecar), entry_kind(sidecar),
               device.size() > 32 ? device.substr(0, 30) + ".." : device, entry_kernels(sidecar)});
  }
  nlohmann::json inputs = nlohmann::json::array();
  for (std::size_t i = 0; i < pack->input_count(); ++i) {
    const pack::InputIndexRecord row = pack->input_record(i);
    inputs.push_back({{"digest", row.digest.hex()}, {"size", row.size}});
  }
  if (options.json) {
    print_json({{"schema", kJsonSchemaVersion}, {"pack", pack->path().string()}, {"entries", list},
                {"refused", refused}, {"inputs", inputs}});
  } else {
    std::fputs(table.render().c_str(), stdout);
    std::printf("%zu entries%s, %s\n", pack->entry_count(),
                refused ? (", " + std::to_string(refused) + " refused").c_str() : "", inputs_summary(*pack).c_str());
  }
  return 0;
}

int show(const PackOptions& options) {
  std::string error;
  std::unique_ptr<PackReader> pack = open_pack(options.packs.at(0), &error);
  if (!pack) return report_error(error);
  if (!options.key.empty()) {
    for (std::size_t i = 0; i < pack->entry_count(); ++i) {
      const pack::IndexRecord record = pack->record(i);
      if (record.key.hex().rfind(options.key, 0) != 0) continue;
      LoadResult loaded = pack->load_record(record);
      if (loaded.status != LoadStatus::hit) return report_error("entry refused: " + loaded.reason);
      if (options.json) print_json({{"schema", kJsonSchemaVersion}, {"key", record.key.hex()}, {"sidecar", loaded.sidecar}});
      else std::puts(store_detail::sidecar_text(loaded.sidecar).c_str());
      return 0;
    }
    return report_error("no entry " + options.key + " in " + options.packs.at(0));
  }
  nlohmann::json out = {{"schema", kJsonSchemaVersion},
                        {"pack", pack->path().string()},
                        {"format_version", pack->header().version},
                        {"checksum", pack::name_of(pack->header().checksum_algorithm)},
                        {"entries", pack->entry_count()},
                        {"bytes", pack->file_size()},
                        {"signature", signature_json(*pack)},
                        {"input_records", pack->input_count()},
                        {"manifest", pack->manifest()}};
  if (options.json) {
    print_json(out);
    return 0;
  }
  const nlohmann::json& manifest = pack->manifest();
  Table table({}, {});
  table.add({"Pack", pack->path().string()});
  table.add({"Format", "version " + std::to_string(pack->header().version) + ", " +
                           pack::name_of(pack->header().checksum_algorithm) + " checksums"});
  table.add({"Entries", std::to_string(pack->entry_count()), format_size(pack->file_size())});
  table.add({"Signed", pack->signer() ? "ed25519 " + pack->signer()->hex() : "no"});
  table.add({"Producer", manifest.value("producer", "?")});
  table.add({"Created", manifest.value("created", "?")});
  table.add({"Stripped", manifest.value("stripped", false) ? "yes" : "no",
             manifest.value("obfuscated", false) ? "obfuscated" : ""});
  table.add({"Inputs", inputs_summary(*pack)});
  for (const auto& device : manifest.value("devices", nlohmann::json::array())) {
    table.add({"Device", device.is_string() ? device.get<std::string>() : device.dump()});
  }
  for (const auto& compiler : manifest.value("compilers", nlohmann::json::array())) {
    table.add({"Compiler", compiler.value("digest", "?")});
  }
  std::fputs(table.render().c_str(), stdout);
  return 0;
}

// Every entry read and checked (the reader refuses an index out of order); exit 1 when anything is wrong.
int verify(const PackOptions& options) {
  nlohmann::json results = nlohmann::json::array();
  int exit_code = 0;
  for (const std::string& path : options.packs) {
    std::string error;
    std::unique_ptr<PackReader> pack = open_pack(path, &error);
    if (!pack) {
      results.push_back({{"pack", path}, {"ok", false}, {"problems", {error}}});
      if (!options.json) std::printf("%s: REFUSED: %s\n", path.c_str(), error.c_str());
      exit_code = 1;
      continue;
    }
    nlohmann::json problems = nlohmann::json::array();
    for (std::string& problem : pack::member_problems(*pack)) problems.push_back(std::move(problem));
    Progress progress("verifying");
    std::set<Digest128> named;  // the records the entries name
    for (std::size_t i = 0; i < pack->entry_count(); ++i) {
      progress(i + 1, pack->entry_count());
      const pack::IndexRecord record = pack->record(i);
      LoadResult loaded = pack->load_record(record, /*full_check=*/true);
      if (loaded.status != LoadStatus::hit) problems.push_back(loaded.reason);
      else if (std::optional<Digest128> inputs = named_inputs(loaded.sidecar)) named.insert(*inputs);
    }
    std::size_t inputs_missing = 0;
    for (std::size_t i = 0; i < pack->input_count(); ++i) {
      const pack::InputIndexRecord row = pack->input_record(i);
      LoadResult loaded = pack->load_input_record(row);
      std::string why;
      if (loaded.status != LoadStatus::hit) problems.push_back(loaded.reason);
      else if (!decode_recorded_inputs(loaded.binary, &why)) problems.push_back("inputs record " + row.digest.hex() + ": " + why);
    }
    for (const Digest128& digest : named) inputs_missing += pack->load_input(digest).status == LoadStatus::miss;
    if (!problems.empty()) exit_code = 1;
    results.push_back({{"pack", path}, {"ok", problems.empty()}, {"entries", pack->entry_count()},
                       {"input_records", pack->input_count()}, {"inputs_missing", inputs_missing},
                       {"signature", signature_json(*pack)}, {"problems", problems}});
    if (!options.json) {
      std::printf("%s: %zu entries, %s, %s, %s\n", path.c_str(), pack->entry_count(), inputs_summary(*pack).c_str(),
                  pack->signer() ? "signed" : "unsigned",
                  problems.empty() ? "ok" : (std::to_string(problems.size()) + " problems").c_str());
      for (const auto& problem : problems) std::printf("  %s\n", problem.get<std::string>().c_str());
    }
  }
  if (options.json) print_json({{"schema", kJsonSchemaVersion}, {"packs", results}});
  return exit_code;
}

int import(const PackOptions& options) {
  const Settings settings = load_settings();
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/true, &error);
  if (!store) return report_error(error);
  std::size_t imported = 0, refused = 0, skipped = 0, inputs_imported = 0;
  const bool opened = for_each_checked_entry(
      options.packs, "importing", &refused,
      [&](const std::string&, const pack::IndexRecord& record, LoadResult& loaded) {
        SaveResult saved = store->save(record.key, loaded.binary, std::move(loaded.sidecar));
        if (saved.status == SaveStatus::stored) ++imported;
        else ++skipped;
      },
      [&](const std::string&, const pack::InputIndexRecord& row, LoadResult& loaded) {
        Digest128 stored_as;  // the store names a record by its own XXH3-128: the pack's name was checked
        SaveResult saved = store->save_inputs(loaded.binary, &stored_as);
        if (saved.status == SaveStatus::stored && stored_as == row.digest) ++inputs_imported;
        else ++skipped;
      },
      &error);
  if (!opened) return report_error(error);
  if (options.json) {
    print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"imported", imported},
                {"inputs_imported", inputs_imported}, {"refused", refused}, {"skipped", skipped}});
  } else {
    std::printf("Imported %zu entries and %zu recorded inputs into %s (%zu refused, %zu skipped)\n", imported,
                inputs_imported, settings.dir.string().c_str(), refused, skipped);
  }
  return refused ? 1 : 0;
}

// Union of the packs' entries. The same key twice with the same bytes is one entry; with other
// bytes it is a conflict: the first pack's entry is kept and the conflict reported.
int merge_or_strip(PackOptions options, const std::string& command) {
  std::map<Digest128, PackEntry> merged;
  // SHA-256 of the checked bytes, not the index's checksums: the packs may use different algorithms.
  std::map<Digest128, pack::Sha256> binary_digest;
  std::map<Digest128, std::pair<pack::Sha256, std::string>> inputs;  // by digest: SHA-256, bytes
  const bool with_inputs = !options.strip && !options.obfuscate;
  nlohmann::json conflicts = nlohmann::json::array();
  std::size_t duplicates = 0, refused = 0;
  std::string error;
  const bool opened = for_each_checked_entry(
      options.packs, "reading", &refused,
      [&](const std::string& path, const pack::IndexRecord& record, LoadResult& loaded) {
        const pack::Sha256 digest = pack::sha256(loaded.binary);
        if (auto existing = binary_digest.find(record.key); existing != binary_digest.end()) {
          if (existing->second == digest) ++duplicates;
          else conflicts.push_back({{"key", record.key.hex()}, {"kept_from", options.packs.front()}, {"dropped_from", path}});
          return;
        }
        binary_digest[record.key] = digest;
        transform(options, &loaded.sidecar);
        merged[record.key] = {record.key, std::move(loaded.sidecar), std::move(loaded.binary)};
      },
      [&](const std::string& path, const pack::InputIndexRecord& row, LoadResult& loaded) {
        if (!with_inputs) return;  // strip and obfuscate ship no source
        const pack::Sha256 digest = pack::sha256(loaded.binary);
        auto [it, added] = inputs.try_emplace(row.digest, digest, std::string());
        if (added) it->second.second = std::move(loaded.binary);
        else if (it->second.first != digest) {
          conflicts.push_back({{"inputs", row.digest.hex()}, {"kept_from", options.packs.front()}, {"dropped_from", path}});
        }
      },
      &error);
  if (!opened) return report_error(error);
  std::vector<PackEntry> entries;
  for (auto& [key, entry] : merged) entries.push_back(std::move(entry));
  std::vector<PackInput> records;
  for (auto& [digest, record] : inputs) records.push_back({digest, std::move(record.second)});
  const std::size_t count = entries.size(), record_count = records.size();
  Progress progress("writing");
  PackWriteOptions write = write_options(options, command);
  write.progress = std::ref(progress);
  if (!write_pack(options.output, entries, records, write, &error)) return report_error(error);
  if (!options.json) {
    for (const auto& conflict : conflicts) {
      std::fprintf(stderr, "jitcache: conflict: %s differs in %s (kept the first)\n",
                   conflict.value("key", conflict.value("inputs", "")).c_str(),
                   conflict["dropped_from"].get<std::string>().c_str());
    }
  }
  finish_write(options, {}, count,
               {{"duplicates", duplicates}, {"conflicts", conflicts}, {"refused", refused}, {"input_records", record_count}});
  return conflicts.empty() && refused == 0 ? 0 : 1;
}

int sign(const PackOptions& options) {
  std::string error;
  if (!sign_pack(options.packs.at(0), read_key_file(options.sign_key), &error)) return report_error(error);
  if (options.json) print_json({{"schema", kJsonSchemaVersion}, {"pack", options.packs.at(0)}, {"signed", true}});
  else std::printf("Signed %s\n", options.packs.at(0).c_str());
  return 0;
}

PackOptions one_pack(PackOptions options) {
  options.packs = {options.pack};
  return options;
}

void add_filters(CLI::App* cli, PackOptions* options) {
  cli->add_option("--device", options->filter.device, "only entries whose device name contains this");
  cli->add_option("--driver", options->filter.driver, "only entries whose driver or compiler identity contains this");
  cli->add_option("--app", options->filter.app, "only entries built by an executable whose path contains this");
  cli->add_option("--kernel", options->filter.kernel, "only entries of programs with this kernel");
  cli->add_option("--label", options->filter.label, "only entries with this label (JITCACHE_LABEL at build time)");
  cli->add_option("--since", options->since, "only entries created within this long (7d) or since this UTC time");
  cli->add_option("--keys-from", options->keys_from, "only the keys listed in this file (one per line)");
}

void add_output(CLI::App* cli, PackOptions* options, bool transforms) {
  cli->add_option("-o,--output", options->output, "the pack to write")->required();
  cli->add_option("--sign", options->sign_key, "sign with this Ed25519 private key (PEM)");
  if (transforms) {
    cli->add_flag("--strip", options->strip, "drop sources, recorded inputs and build logs: binaries only");
    cli->add_flag("--obfuscate", options->obfuscate, "--strip, and labels and kernel names become hashes");
  }
}

}  // namespace

Command add_pack_command(CLI::App& app) {
  auto options = std::make_shared<PackOptions>();
  CLI::App* cli = app.add_subcommand("pack", "portable read-only cache packs: create, inspect, merge, sign, import");
  cli->require_subcommand(1);
  std::vector<std::pair<CLI::App*, std::function<int()>>> subs;
  auto json_flag = [&](CLI::App* sub) { sub->add_flag("--json", options->json, "machine-readable output (docs/cli.md)"); };

  CLI::App* create_cli = cli->add_subcommand("create", "write the store's entries (filtered) into a pack");
  add_filters(create_cli, options.get());
  add_output(create_cli, options.get(), true);
  create_cli->add_flag("--no-wait", options->no_wait, "do not wait for captures still in flight (the pack lacks them)");
  create_cli->add_option("--wait", options->wait, "wait at most this long for captures in flight (default: capture_wait, 10m)");
  json_flag(create_cli);
  subs.emplace_back(create_cli, [options] { return create(*options); });

  CLI::App* ls_cli = cli->add_subcommand("ls", "list a pack's entries");
  ls_cli->add_option("pack", options->pack, "the pack")->required();
  json_flag(ls_cli);
  subs.emplace_back(ls_cli, [options] { return list(one_pack(*options)); });

  CLI::App* show_cli = cli->add_subcommand("show", "a pack's manifest and signature, or one entry's sidecar");
  show_cli->add_option("pack", options->pack, "the pack")->required();
  show_cli->add_option("key", options->key, "key (or prefix) of an entry to show");
  json_flag(show_cli);
  subs.emplace_back(show_cli, [options] { return show(one_pack(*options)); });

  CLI::App* verify_cli = cli->add_subcommand("verify", "check every entry's checksums and the signature");
  verify_cli->add_option("packs", options->packs, "the packs")->required();
  json_flag(verify_cli);
  subs.emplace_back(verify_cli, [options] { return verify(*options); });

  CLI::App* import_cli = cli->add_subcommand("import", "copy a pack's entries and recorded inputs into the local store");
  import_cli->add_option("packs", options->packs, "the packs")->required();
  json_flag(import_cli);
  subs.emplace_back(import_cli, [options] { return import(*options); });

  CLI::App* merge_cli = cli->add_subcommand("merge", "union of packs, deduplicated; conflicting keys reported");
  merge_cli->add_option("packs", options->packs, "the packs")->required();
  add_output(merge_cli, options.get(), true);
  json_flag(merge_cli);
  subs.emplace_back(merge_cli, [options] { return merge_or_strip(*options, "merge"); });

  CLI::App* strip_cli = cli->add_subcommand("strip", "a copy without sources, recorded inputs and build logs (--obfuscate: names hashed)");
  strip_cli->add_option("pack", options->pack, "the pack")->required();
  add_output(strip_cli, options.get(), false);
  strip_cli->add_flag("--obfuscate", options->obfuscate, "labels and kernel names become hashes too");
  json_flag(strip_cli);
  subs.emplace_back(strip_cli, [options] {
    options->strip = true;
    return merge_or_strip(one_pack(*options), "strip");
  });

  CLI::App* sign_cli = cli->add_subcommand("sign", "sign a pack in place (Ed25519)");
  sign_cli->add_option("pack", options->pack, "the pack")->required();
  sign_cli->add_option("-k,--key", options->sign_key, "Ed25519 private key (PEM)")->required();
  json_flag(sign_cli);
  subs.emplace_back(sign_cli, [options] { return sign(one_pack(*options)); });

  return {cli, [subs] {
            for (const auto& [sub, run] : subs) {
              if (sub->parsed()) return run();
            }
            return report_error("no pack command given (see jitcache pack --help)", 2);
          }};
}

}  // namespace jitcache::tool
