#include "store/local/entry_check.hpp"

#include <optional>

#include "hashing/bounded_json.hpp"
#include "hashing/digest.hpp"
#include "store/local/entry_file.hpp"
#include "store/local/pack_sidecar.hpp"

namespace jitcache::store_detail {
namespace {

using State = EntryCheck::State;

EntryCheck fail(EntryCheck check, State state, std::string reason) {
  check.state = state;
  check.reason = std::move(reason);
  check.binary.clear();
  check.commit_file.close();
  return check;
}

// Errors that say "this path is not a readable regular file we wrote", i.e. the entry is damaged,
// as opposed to the process or the system being in trouble.
bool is_damage(const std::error_code& error) {
  return error == std::errc::too_many_symbolic_link_levels || error == std::errc::is_a_directory ||
         error == std::errc::no_such_device_or_address || error == std::errc::file_too_large ||
         fileops::is_trust_error(error);
}

std::string damage_reason(const char* what, const std::error_code& error) {
  if (error == std::errc::file_too_large) return std::string(what) + " is implausibly large";
  if (error == std::errc::too_many_symbolic_link_levels) return std::string(what) + " is a symbolic link";
  if (fileops::is_trust_error(error)) {
    return std::string(what) + " is " + error.message() + ": not served";
  }
  return std::string(what) + " is not a regular file";
}

}  // namespace

void add_integrity_fields(nlohmann::json* sidecar, std::string_view key_hex, std::string_view binary) {
  (*sidecar)[kKeyField] = std::string(key_hex);
  (*sidecar)[kSizeField] = static_cast<std::uint64_t>(binary.size());
  (*sidecar)[kChecksumField] = hex64(xxh3_64(binary));
}

std::string sidecar_text(const nlohmann::json& sidecar) {
  return sidecar.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

// The sidecar's own integrity fields, checked in both formats: the key it names and the size and
// XXH3-64 of the binary it describes (tools and packs read them).
struct SidecarFields {
  std::uint64_t binary_size = 0;
  std::string binary_checksum;
};

std::optional<SidecarFields> parse_sidecar(EntryCheck* check, const std::string& text, bool whole_sidecar,
                                           const EntryPaths& paths, std::string* why) {
  std::optional<pack::HitFields> split =
      whole_sidecar ? std::nullopt : pack::all_but(text, "components", pack::kAnswersTextField);
  check->sidecar = split ? std::move(split->fields) : parse_untrusted_json(text);
  if (split) check->answers = std::move(split->as_text);
  if (check->sidecar.is_discarded()) return *why = "sidecar is not valid JSON", std::nullopt;
  if (!check->sidecar.is_object()) return *why = "sidecar is not a JSON object", std::nullopt;
  const auto size_field = check->sidecar.find(kSizeField);
  if (size_field == check->sidecar.end() || !size_field->is_number_unsigned()) {
    return *why = std::string("sidecar lacks a valid ") + kSizeField, std::nullopt;
  }
  const auto checksum_field = check->sidecar.find(kChecksumField);
  if (checksum_field == check->sidecar.end() || !checksum_field->is_string()) {
    return *why = std::string("sidecar lacks a valid ") + kChecksumField, std::nullopt;
  }
  const auto key_field = check->sidecar.find(kKeyField);
  if (key_field == check->sidecar.end() || !key_field->is_string()) {
    return *why = std::string("sidecar lacks a valid ") + kKeyField, std::nullopt;
  }
  if (key_field->get_ref<const std::string&>() != paths.key_hex) {
    return *why = "sidecar belongs to key " + key_field->get<std::string>().substr(0, 64) +
                  ": copied or linked under another key's name",
           std::nullopt;
  }
  return SidecarFields{size_field->get<std::uint64_t>(), checksum_field->get<std::string>()};
}

std::string size_mismatch(std::uint64_t actual, std::uint64_t recorded) {
  return "binary size " + std::to_string(actual) + " != recorded " + std::to_string(recorded);
}

// Format 2: the entry file, already open, read at once and checked against its header.
EntryCheck check_entry_file(EntryCheck check, const EntryPaths& paths, bool whole_sidecar) {
  std::string bytes;
  if (auto error = check.commit_file.read_all(&bytes, kMaxEntryFileBytes)) {
    if (is_damage(error)) return fail(std::move(check), State::bad, "entry file is implausibly large");
    return fail(std::move(check), State::io_error, "cannot read entry file: " + error.message());
  }
  std::string why;
  EntryHeader header;
  const std::optional<std::string> sidecar = split_entry(&bytes, *Digest128::from_hex(paths.key_hex), &header, &why);
  if (!sidecar) return fail(std::move(check), State::bad, std::move(why));
  const std::optional<SidecarFields> fields = parse_sidecar(&check, *sidecar, whole_sidecar, paths, &why);
  if (!fields) return fail(std::move(check), State::bad, std::move(why));
  if (fields->binary_size != bytes.size()) {
    return fail(std::move(check), State::bad, size_mismatch(bytes.size(), fields->binary_size));
  }
  if (fields->binary_checksum != hex64(header.binary_xxh3)) {
    return fail(std::move(check), State::bad, "sidecar's " + std::string(kChecksumField) + " is not the entry header's");
  }
  check.binary = std::move(bytes);
  check.state = State::ok;
  return check;
}

// Format 1: the sidecar (commit marker) and then the binary it describes.
EntryCheck check_pair(EntryCheck check, const fileops::Dir& shard, const EntryPaths& paths, bool whole_sidecar) {
  if (auto error = fileops::File::open_read(shard, paths.sidecar_name, &check.commit_file, kMaxSidecarBytes)) {
    if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory) {
      return fail(std::move(check), State::missing, "");
    }
    if (is_damage(error)) return fail(std::move(check), State::bad, damage_reason("sidecar", error));
    return fail(std::move(check), State::io_error, "cannot open sidecar: " + error.message());
  }
  std::string text;
  if (auto error = check.commit_file.read_all(&text, kMaxSidecarBytes)) {
    if (is_damage(error)) return fail(std::move(check), State::bad, "sidecar is implausibly large");
    return fail(std::move(check), State::io_error, "cannot read sidecar: " + error.message());
  }
  std::string why;
  const std::optional<SidecarFields> fields = parse_sidecar(&check, text, whole_sidecar, paths, &why);
  if (!fields) return fail(std::move(check), State::bad, std::move(why));
  const std::uint64_t expected_size = fields->binary_size;

  fileops::File binary_file;
  if (auto error = fileops::File::open_read(shard, paths.binary_name, &binary_file)) {
    if (error == std::errc::no_such_file_or_directory) {
      return fail(std::move(check), State::bad, "binary is missing");
    }
    if (is_damage(error)) return fail(std::move(check), State::bad, damage_reason("binary", error));
    return fail(std::move(check), State::io_error, "cannot open binary: " + error.message());
  }
  fileops::FileInfo binary_info;
  if (auto error = binary_file.info(&binary_info)) {
    return fail(std::move(check), State::io_error, "cannot stat binary: " + error.message());
  }
  if (binary_info.size != expected_size) {  // cheap rejection before reading it all
    return fail(std::move(check), State::bad, size_mismatch(binary_info.size, expected_size));
  }
  if (auto error = binary_file.read_all(&check.binary, expected_size)) {
    if (is_damage(error)) return fail(std::move(check), State::bad, "binary grew while reading");
    return fail(std::move(check), State::io_error, "cannot read binary: " + error.message());
  }
  if (check.binary.size() != expected_size) {
    return fail(std::move(check), State::bad, "binary shrank while reading");
  }
  const std::string actual_checksum = hex64(xxh3_64(check.binary));
  if (actual_checksum != fields->binary_checksum) {
    return fail(std::move(check), State::bad,
                "binary checksum " + actual_checksum + " != recorded " + fields->binary_checksum);
  }
  check.state = State::ok;
  return check;
}

}  // namespace

EntryCheck check_entry(const StoreLayout& layout, const EntryPaths& paths, bool whole_sidecar) {
  EntryCheck check;

  // The shard folder once, then the files relative to it: a hit costs one walk, and every fd's
  // owner and mode come from fstat on what is already open.
  fileops::Dir shard;
  if (auto error = layout.dir().open_dir(paths.inner_dir, &shard)) {
    if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory) {
      return fail(std::move(check), State::missing, "");
    }
    if (fileops::is_trust_error(error)) {
      return fail(std::move(check), State::bad,
                  "shard folder " + layout.shown(paths.inner_dir).string() + " is " + error.message() +
                      ": its entries are not served (remove that folder)");
    }
    return fail(std::move(check), State::io_error, "cannot open shard folder: " + error.message());
  }
  // The entry file first: a format 1 pair left next to it (a save cut short) is older.
  const std::error_code error = fileops::File::open_read(shard, paths.entry_name, &check.commit_file, kMaxEntryFileBytes);
  if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory) {
    return check_pair(std::move(check), shard, paths, whole_sidecar);
  }
  if (error && is_damage(error)) return fail(std::move(check), State::bad, damage_reason("entry file", error));
  if (error) return fail(std::move(check), State::io_error, "cannot open entry file: " + error.message());
  return check_entry_file(std::move(check), paths, whole_sidecar);
}

}  // namespace jitcache::store_detail
