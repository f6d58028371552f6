// What a rebuild of a keyed program needs, recorded next to its entry (`store_inputs`, docs/
// store-format.md, "Recorded inputs"): the source or IL, options, the contents of every header the
// include scan found, spec constants, keyed environment variables and the working directory the
// scan resolved against. The platform and device identity are the sidecar's key components.
//
// Encoded as a flat, length-prefixed byte record (no nesting, nothing to recurse into): a record
// read back from disk is hostile input, and decoding checks every length against what is left.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hashing/build_inputs.hpp"

namespace jitcache {

// Far above any real program (a 100 KiB source with its headers), far below what hurts.
inline constexpr std::uint64_t kMaxRecordedInputsBytes = 64ull << 20;

struct RecordedHeader {
  std::string name;
  std::string path;
  bool found = false;
  std::string contents;  // the bytes the key's digest was taken over (empty when not found)
};

struct RecordedInputs {
  Api api = Api::opencl;
  ProgramKind kind = ProgramKind::source;
  std::string input;
  std::string options;
  std::string working_dir;
  std::vector<RecordedHeader> headers;
  std::vector<SpecConstant> spec_constants;
  std::vector<NameValue> environment;
};

std::string encode_recorded_inputs(const RecordedInputs& inputs);
// nullopt and `why` set when `bytes` is not a well-formed record of this version.
std::optional<RecordedInputs> decode_recorded_inputs(std::string_view bytes, std::string* why);

// The record of `program` (as prepared by the engine: headers found, environment read), with each
// found header's contents read from its path now. nullopt and `why` set when a header cannot be
// read or no longer has the digest the key holds: such a record could not reproduce the key.
std::optional<RecordedInputs> record_inputs(const ProgramInputs& program, std::string working_dir, std::string* why);

}  // namespace jitcache
