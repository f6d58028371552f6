// Reads the little a cache (and the test driver's "compiler") needs from a SPIR-V module: its
// version, kernel entry points and specialization constants (SpecId, byte width, default value).
// Level Zero passes constant values as bare pointers, so the width every value is read with must
// come from here, never be guessed. Every read is bounds-checked; anything malformed comes back as
// an error message, never a crash (fuzzed by tests/fuzz/spirv_module_fuzz.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace jitcache {

struct SpirvSpecConstant {
  std::uint32_t spec_id = 0;
  std::uint32_t size_bytes = 0;    // bool 1, int8 1, int16/half 2, int32/float 4, int64/double 8
  bool is_bool = false;
  std::uint64_t default_bits = 0;  // default value, zero-extended from size_bytes
};

struct SpirvModuleInfo {
  std::uint32_t version_major = 0;
  std::uint32_t version_minor = 0;
  std::vector<std::string> kernel_names;          // OpEntryPoint Kernel, in module order
  std::vector<SpirvSpecConstant> spec_constants;  // sorted by spec_id, ids unique
};

struct SpirvReadResult {
  std::optional<SpirvModuleInfo> info;
  std::string error;  // set when info is empty
};

// Little-endian modules only (what every OpenCL/Level Zero producer emits).
SpirvReadResult read_spirv_module(std::span<const std::uint8_t> bytes);

// The module's constant with this SpecId, or nullptr.
const SpirvSpecConstant* find_spec_constant(const SpirvModuleInfo& info, std::uint32_t spec_id);

}  // namespace jitcache
