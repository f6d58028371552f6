#include "store/entry_check.hpp"

#include <optional>

#include "hashing/bounded_json.hpp"
#include "hashing/digest.hpp"
#include "store/pack_sidecar.hpp"

namespace jitcache::store_detail {
namespace {

using State = EntryCheck::State;

EntryCheck fail(EntryCheck check, State state, std::string reason) {
  check.state = state;
  check.reason = std::move(reason);
  check.binary.clear();
  check.sidecar_file.close();
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

EntryCheck check_entry(const StoreLayout& layout, const EntryPaths& paths, bool whole_sidecar) {
  EntryCheck check;

  // The shard folder once, then both files relative to it: a hit costs one walk, and every fd's
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
  if (auto error = fileops::File::open_read(shard, paths.sidecar_name, &check.sidecar_file, kMaxSidecarBytes)) {
    if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory) {
      return fail(std::move(check), State::missing, "");
    }
    if (is_damage(error)) return fail(std::move(check), State::bad, damage_reason("sidecar", error));
    return fail(std::move(check), State::io_error, "cannot open sidecar: " + error.message());
  }
  std::string text;
  if (auto error = check.sidecar_file.read_all(&text, kMaxSidecarBytes)) {
    if (is_damage(error)) return fail(std::move(check), State::bad, "sidecar is implausibly large");
    return fail(std::move(check), State::io_error, "cannot read sidecar: " + error.message());
  }

  std::optional<pack::HitFields> split =
      whole_sidecar ? std::nullopt : pack::all_but(text, "components", pack::kAnswersTextField);
  check.sidecar = split ? std::move(split->fields) : parse_untrusted_json(text);
  if (split) check.answers = std::move(split->as_text);
  if (check.sidecar.is_discarded()) return fail(std::move(check), State::bad, "sidecar is not valid JSON");
  if (!check.sidecar.is_object()) return fail(std::move(check), State::bad, "sidecar is not a JSON object");
  const auto size_field = check.sidecar.find(kSizeField);
  if (size_field == check.sidecar.end() || !size_field->is_number_unsigned()) {
    return fail(std::move(check), State::bad, std::string("sidecar lacks a valid ") + kSizeField);
  }
  const auto checksum_field = check.sidecar.find(kChecksumField);
  if (checksum_field == check.sidecar.end() || !checksum_field->is_string()) {
    return fail(std::move(check), State::bad, std::string("sidecar lacks a valid ") + kChecksumField);
  }
  const auto key_field = check.sidecar.find(kKeyField);
  if (key_field == check.sidecar.end() || !key_field->is_string()) {
    return fail(std::move(check), State::bad, std::string("sidecar lacks a valid ") + kKeyField);
  }
  if (key_field->get_ref<const std::string&>() != paths.key_hex) {
    // The reason first: `fail` takes `check` by value, and the argument order is unspecified
    // (clang moves the sidecar out before reading the field here).
    std::string reason = "sidecar belongs to key " + key_field->get<std::string>().substr(0, 64) +
                         ": copied or linked under another key's name";
    return fail(std::move(check), State::bad, std::move(reason));
  }
  const std::uint64_t expected_size = size_field->get<std::uint64_t>();
  const std::string expected_checksum = checksum_field->get<std::string>();

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
    return fail(std::move(check), State::bad,
                "binary size " + std::to_string(binary_info.size) + " != recorded " +
                    std::to_string(expected_size));
  }
  if (auto error = binary_file.read_all(&check.binary, expected_size)) {
    if (is_damage(error)) return fail(std::move(check), State::bad, "binary grew while reading");
    return fail(std::move(check), State::io_error, "cannot read binary: " + error.message());
  }
  if (check.binary.size() != expected_size) {
    return fail(std::move(check), State::bad, "binary shrank while reading");
  }
  const std::string actual_checksum = hex64(xxh3_64(check.binary));
  if (actual_checksum != expected_checksum) {
    return fail(std::move(check), State::bad,
                "binary checksum " + actual_checksum + " != recorded " + expected_checksum);
  }
  check.state = State::ok;
  return check;
}

}  // namespace jitcache::store_detail
