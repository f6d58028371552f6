// Everything that decides a compiled binary, as plain data. Adapters fill these in; derive_key()
// turns them into a key. No OpenCL or Level Zero types here.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hashing/digest.hpp"

namespace jitcache {

enum class Api { opencl, level_zero };
// source: OpenCL C text; il: SPIR-V bytes; compiled: clCompileProgram output object;
// linked: clLinkProgram over keyed inputs (input = the inputs' keys).
enum class ProgramKind { source, il, compiled, linked };

const char* to_string(Api api);
const char* to_string(ProgramKind kind);

using NameValue = std::pair<std::string, std::string>;

// One #include'd header as found by the scanner (or passed in through clCompileProgram's
// input_headers). A header that was not found is still recorded, with found = false.
struct HeaderDependency {
  std::string name;  // as written in the #include directive
  std::string path;  // resolved path; empty when not found
  bool found = false;
  Digest128 digest;  // XXH3-128 of the contents when found
};

struct SpecConstant {
  std::uint32_t id = 0;
  std::string value;  // raw bytes, exactly the width the module declares
};

// A library that decides codegen: the vendor driver and its compiler libraries.
struct LibraryIdentity {
  std::string path;
  std::string build_id;  // GNU build-id as hex, empty when the file has none
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;  // only part of the key when build_id is empty
};

struct CompilerIdentity {
  std::vector<LibraryIdentity> libraries;
  std::vector<NameValue> versions;  // e.g. {"platform_version", "..."}, {"driver_version", "..."}
};

struct DeviceIdentity {
  std::vector<NameValue> fields;  // e.g. vendor_id, name, device_version; never a per-card UUID
};

// The per-program part, shared by every device the program is built for.
struct ProgramInputs {
  Api api = Api::opencl;
  ProgramKind kind = ProgramKind::source;
  std::string input;    // source text (all strings concatenated), IL bytes, or input keys
  std::string options;  // build options exactly as the app passed them
  std::vector<HeaderDependency> headers;
  std::vector<SpecConstant> spec_constants;  // any order; derive_key sorts by id
  std::vector<NameValue> environment;        // codegen-relevant env vars that are set
};

// The per-device part.
struct TargetIdentity {
  CompilerIdentity compiler;
  DeviceIdentity device;
};

}  // namespace jitcache
