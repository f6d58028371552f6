// store_inputs (docs/store-format.md, "Recorded inputs"): what the engine keeps so that `jitcache
// warm` and the capture helper can rebuild a program outside the app that first built it.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hashing/build_inputs.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {

// The program's inputs as a record's bytes (hashing/recorded_inputs.hpp), or nullopt and `why` (a
// kind that cannot be replayed, a header that changed since it was hashed, a record over its cap).
std::optional<std::string> encode_program_inputs(const ProgramInputs& program, const std::string& working_dir,
                                                 std::string* why);

// Records the program's inputs in the store; the record's name (and its bytes in `encoded`, for
// the remote tier), or nullopt and `why` (a kind that cannot be replayed, a header that changed
// since it was hashed, a store error).
std::optional<Digest128> store_recorded_inputs(DiskStore& store, const ProgramInputs& program,
                                               const std::string& working_dir, std::string* why,
                                               std::string* encoded = nullptr);

// store_inputs = 0: the sidecar keeps no source text either (its key components show small
// sources verbatim for `jitcache explain`).
void forget_source_text(nlohmann::json* sidecar);

}  // namespace jitcache
