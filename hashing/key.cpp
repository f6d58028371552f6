#include "hashing/key.hpp"

#include <algorithm>
#include <mutex>

namespace jitcache {
namespace {

// Small sources are kept verbatim in the record so `jitcache explain` can show a diff.
constexpr std::size_t kMaxInlineTextBytes = 4096;

bool is_option_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string bytes_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char byte : bytes) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0xf]);
  }
  return out;
}

// Length of the valid UTF-8 sequence starting at `position`, or 0 when it is not valid.
std::size_t utf8_sequence_length(std::string_view text, std::size_t position) {
  const auto lead = static_cast<unsigned char>(text[position]);
  std::size_t length = 0;
  unsigned char min_second = 0x80, max_second = 0xbf;
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) length = 3;
  else if (lead >= 0xf0 && lead <= 0xf4) length = 4;
  else return 0;
  if (lead == 0xe0) min_second = 0xa0;  // overlong
  if (lead == 0xed) max_second = 0x9f;  // surrogates
  if (lead == 0xf0) min_second = 0x90;  // overlong
  if (lead == 0xf4) max_second = 0x8f;  // beyond U+10FFFF
  if (position + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(text[position + i]);
    const bool second = i == 1;
    if (byte < (second ? min_second : 0x80) || byte > (second ? max_second : 0xbf)) return 0;
  }
  return length;
}

// nlohmann::json throws when dumping invalid UTF-8; paths, env values and device names are
// arbitrary bytes, so the record shows them with U+FFFD instead. Digests use the raw bytes.
std::string json_text(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t position = 0; position < bytes.size();) {
    const std::size_t length = utf8_sequence_length(bytes, position);
    if (length == 0) {
      out += "\xef\xbf\xbd";
      ++position;
    } else {
      out.append(bytes.substr(position, length));
      position += length;
    }
  }
  return out;
}

template <typename T, typename Less>
std::vector<T> sorted_copy(std::vector<T> items, Less less) {
  std::stable_sort(items.begin(), items.end(), less);
  return items;
}

std::vector<NameValue> sorted_pairs(const std::vector<NameValue>& pairs) {
  return sorted_copy(pairs, [](const NameValue& a, const NameValue& b) { return a < b; });
}

void hash_pairs(CanonicalHasher& hasher, const std::vector<NameValue>& pairs) {
  hasher.field(static_cast<std::uint64_t>(pairs.size()));
  for (const auto& [name, value] : pairs) hasher.field(name).field(value);
}

nlohmann::json pairs_json(const std::vector<NameValue>& pairs) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : pairs) object[json_text(name)] = json_text(value);
  return object;
}

KeyComponent schema_component() {
  CanonicalHasher hasher;
  hasher.field(static_cast<std::uint64_t>(kKeySchemaVersion));
  return {"schema", hasher.finish(), kKeySchemaVersion};
}

KeyComponent name_component(const char* component, const char* value) {
  CanonicalHasher hasher;
  hasher.field(value);
  return {component, hasher.finish(), value};
}

KeyComponent input_component(const ProgramInputs& program) {
  const Digest128 contents = xxh3_128(program.input);
  CanonicalHasher hasher;
  hasher.field(program.input);
  nlohmann::json value = {{"size", program.input.size()}, {"digest", contents.hex()}};
  if (program.kind == ProgramKind::source && program.input.size() < kMaxInlineTextBytes) {
    value["text"] = json_text(program.input);
  }
  return {"input", hasher.finish(), std::move(value)};
}

KeyComponent options_component(const ProgramInputs& program) {
  const std::string options = normalize_options(program.options);
  CanonicalHasher hasher;
  hasher.field(options);
  return {"options", hasher.finish(), json_text(options)};
}

// The resolved path is part of the digest too: __FILE__ and debug info embed it.
KeyComponent headers_component(const ProgramInputs& program) {
  CanonicalHasher hasher;
  nlohmann::json value = nlohmann::json::array();
  hasher.field(static_cast<std::uint64_t>(program.headers.size()));
  for (const HeaderDependency& header : program.headers) {
    hasher.field(header.name).field(header.path);
    hasher.field(static_cast<std::uint64_t>(header.found)).field(header.digest);
    value.push_back({{"name", json_text(header.name)},
                     {"path", json_text(header.path)},
                     {"found", header.found},
                     {"digest", header.digest.hex()}});
  }
  return {"headers", hasher.finish(), std::move(value)};
}

// Sorted by id: the order the app set them in does not change the binary.
KeyComponent spec_constants_component(const ProgramInputs& program) {
  const auto constants =
      sorted_copy(program.spec_constants, [](const SpecConstant& a, const SpecConstant& b) {
        return a.id != b.id ? a.id < b.id : a.value < b.value;
      });
  CanonicalHasher hasher;
  nlohmann::json value = nlohmann::json::array();
  hasher.field(static_cast<std::uint64_t>(constants.size()));
  for (const SpecConstant& constant : constants) {
    hasher.field(static_cast<std::uint64_t>(constant.id)).field(constant.value);
    value.push_back({{"id", constant.id}, {"value_hex", bytes_hex(constant.value)}});
  }
  return {"spec_constants", hasher.finish(), std::move(value)};
}

// With a build-id the file's identity is known exactly, so a touched-but-identical library
// (package reinstall, copy) must not invalidate; without one, size + mtime stand in for it.
void hash_library(CanonicalHasher& hasher, const LibraryIdentity& library) {
  hasher.field(library.path).field(library.build_id);
  if (library.build_id.empty()) {
    hasher.field(library.size).field(static_cast<std::uint64_t>(library.mtime_ns));
  }
}

KeyComponent pairs_component(const char* component, const std::vector<NameValue>& pairs) {
  const auto sorted = sorted_pairs(pairs);
  CanonicalHasher hasher;
  hash_pairs(hasher, sorted);
  return {component, hasher.finish(), pairs_json(sorted)};
}

}  // namespace

KeyComponent compiler_component(const TargetIdentity& target) {
  const auto libraries = sorted_copy(
      target.compiler.libraries,
      [](const LibraryIdentity& a, const LibraryIdentity& b) { return a.path < b.path; });
  const auto versions = sorted_pairs(target.compiler.versions);
  CanonicalHasher hasher;
  // Everything the value shows (size and mtime too, which the key leaves out when there is a
  // build-id): the memo below must never return the value of another identity.
  CanonicalHasher shown;
  hasher.field(static_cast<std::uint64_t>(libraries.size()));
  shown.field(static_cast<std::uint64_t>(libraries.size()));
  for (const LibraryIdentity& library : libraries) {
    hash_library(hasher, library);
    shown.field(library.path).field(library.build_id).field(library.size);
    shown.field(static_cast<std::uint64_t>(library.mtime_ns));
  }
  hash_pairs(hasher, versions);
  hash_pairs(shown, versions);
  const Digest128 digest = hasher.finish();
  const Digest128 shown_digest = shown.finish();

  // Every lookup of a device has the same identity; building its JSON (a dozen sanitized strings)
  // was most of this function. A few identities per process at most; never destroyed (lookups
  // may run while statics are torn down).
  static auto* mutex = new std::mutex;
  static auto* values = new std::vector<std::pair<Digest128, nlohmann::json>>;
  {
    std::lock_guard lock(*mutex);
    for (const auto& [seen, value] : *values) {
      if (seen == shown_digest) return {"compiler", digest, value};
    }
  }
  nlohmann::json libraries_json = nlohmann::json::array();
  for (const LibraryIdentity& library : libraries) {
    libraries_json.push_back({{"path", json_text(library.path)},
                              {"build_id", json_text(library.build_id)},
                              {"size", library.size},
                              {"mtime_ns", library.mtime_ns}});
  }
  nlohmann::json value = {{"libraries", std::move(libraries_json)}, {"versions", pairs_json(versions)}};
  std::lock_guard lock(*mutex);
  if (values->size() < 16) values->emplace_back(shown_digest, value);
  return {"compiler", digest, std::move(value)};
}

nlohmann::json KeyRecord::to_json() const {
  nlohmann::json components_json = nlohmann::json::object();
  for (const KeyComponent& component : components) {
    components_json[component.name] = {{"digest", component.digest.hex()}, {"value", component.value}};
  }
  return {{"schema", kKeySchemaVersion}, {"key", key.hex()}, {"components", std::move(components_json)}};
}

std::string normalize_options(std::string_view options) {
  std::string normalized;
  normalized.reserve(options.size());
  bool pending_space = false;
  for (char c : options) {
    if (is_option_space(c)) {
      pending_space = !normalized.empty();
      continue;
    }
    if (pending_space) normalized.push_back(' ');
    pending_space = false;
    normalized.push_back(c);
  }
  return normalized;
}

KeyRecord derive_key(const ProgramInputs& program, const TargetIdentity& target) {
  KeyRecord record;
  // Fixed order: it is part of the encoding, so reordering is a schema change.
  record.components = {
      schema_component(),
      name_component("api", to_string(program.api)),
      name_component("kind", to_string(program.kind)),
      input_component(program),
      options_component(program),
      headers_component(program),
      spec_constants_component(program),
      compiler_component(target),
      pairs_component("device", target.device.fields),
      pairs_component("environment", program.environment),
  };
  CanonicalHasher hasher;
  hasher.field(static_cast<std::uint64_t>(kKeySchemaVersion));
  for (const KeyComponent& component : record.components) hasher.field(component.name).field(component.digest);
  record.key = hasher.finish();
  return record;
}

}  // namespace jitcache
