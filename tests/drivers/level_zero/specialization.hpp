// Applies the caller's ze_module_constants_t to the module's specialization constants, reading each
// value with the byte width the SPIR-V declares (as a real driver does).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <ze_api.h>

#include "hashing/spirv_module.hpp"

namespace jitcache::test_ze {

struct SpecializedConstant {
  std::uint32_t spec_id = 0;
  std::uint32_t size_bytes = 0;
  bool is_bool = false;  // any non-zero byte means true, so it is stored as 0 or 1
  std::uint64_t value_bits = 0;
};

struct SpecializationResult {
  ze_result_t result = ZE_RESULT_SUCCESS;
  std::string error;                          // set when result is not ZE_RESULT_SUCCESS
  std::vector<SpecializedConstant> constants; // every constant of the module with its effective value
};

// Constants the caller leaves out keep their defaults, so a module specialized to its defaults
// compiles to the same binary as an unspecialized one. A repeated id takes its last value.
SpecializationResult specialize(std::span<const SpirvSpecConstant> declared,
                                const ze_module_constants_t* requested);

}  // namespace jitcache::test_ze
