// Key derivation: a canonical, versioned record of ProgramInputs + TargetIdentity, one digest per
// component (so `jitcache explain` can name what changed) and the final XXH3-128 key.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/build_inputs.hpp"

namespace jitcache {

// Bump on any change to what goes into the key or how it is encoded.
inline constexpr int kKeySchemaVersion = 1;

struct KeyComponent {
  std::string name;      // "input", "options", "headers", "spec_constants", "compiler", "device", "environment", ...
  Digest128 digest;      // digest of this component alone
  nlohmann::json value;  // the component by value (large inputs: size + digest only)
};

struct KeyRecord {
  Digest128 key;
  std::vector<KeyComponent> components;

  // {"schema": N, "key": hex, "components": {name: {"digest": hex, "value": ...}}}
  nlohmann::json to_json() const;
};

// Collapses runs of whitespace to one space and trims both ends; order is kept.
std::string normalize_options(std::string_view options);

KeyRecord derive_key(const ProgramInputs& program, const TargetIdentity& target);

// The key's "compiler" component of a target, as derive_key makes it (and the trace records it):
// `jitcache doctor` shows it for each visible device.
KeyComponent compiler_component(const TargetIdentity& target);

}  // namespace jitcache
