// Reads the little the "compiler" needs from a SPIR-V module: kernel entry points and the
// specialization constants (SpecId, byte width, default value). Every read is bounds-checked;
// anything malformed comes back as a compiler-style error message.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace jitcache::test_ze {

// The highest SPIR-V version this "compiler" accepts (the one zeDeviceGetModuleProperties reports).
inline constexpr std::uint32_t kMaxSpirvMajor = 1;
inline constexpr std::uint32_t kMaxSpirvMinor = 4;

struct SpirvSpecConstant {
  std::uint32_t spec_id = 0;
  std::uint32_t size_bytes = 0;   // what the driver reads from ze_module_constants_t::pConstantValues
  bool is_bool = false;
  std::uint64_t default_bits = 0; // default value, zero-extended from size_bytes
};

struct SpirvModuleInfo {
  std::vector<std::string> kernel_names;          // OpEntryPoint Kernel, in module order
  std::vector<SpirvSpecConstant> spec_constants;  // sorted by spec_id
};

struct SpirvReadResult {
  std::optional<SpirvModuleInfo> info;
  std::string error;  // set when info is empty
};

SpirvReadResult read_spirv_module(std::span<const std::uint8_t> bytes);

}  // namespace jitcache::test_ze
