// What `jitcache pack` does to a sidecar before it goes into a pack: select (filters), strip (no
// sources, no build logs: binaries and what identifies them), obfuscate (names become hashes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"

namespace jitcache::tool {

struct PackFilter {
  std::string device;   // substring of the sidecar's device name
  std::string driver;   // substring of the device/compiler identity (driver and platform versions, library paths)
  std::string app;      // substring of created_by (the executable that built it)
  std::string kernel;   // exact name among kernel_names
  std::string label;    // exact label (JITCACHE_LABEL at build time)
  std::string since;    // ISO-8601 UTC: created at or after
  std::vector<Digest128> keys;  // --keys-from: only these (empty: all)
};

bool matches(const PackFilter& filter, const Digest128& key, const nlohmann::json& sidecar);

// Removes the recorded sources (component "text" values), build logs and recorded inputs.
void strip_sidecar(nlohmann::json* sidecar);
// strip_sidecar, then labels, kernel names and the building executable become hashes, and the key
// components that can name the app's code (input, headers, options, environment, spec constants)
// keep only their digests.
void obfuscate_sidecar(nlohmann::json* sidecar);

// "7d" (a duration back from now) or an ISO-8601 time as is; nullopt when it is neither.
std::optional<std::string> since_time(const std::string& text);

}  // namespace jitcache::tool
