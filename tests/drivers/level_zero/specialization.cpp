#include "specialization.hpp"

#include <algorithm>
#include <cstring>

namespace jitcache::test_ze {

SpecializationResult specialize(std::span<const SpirvSpecConstant> declared,
                                const ze_module_constants_t* requested) {
  SpecializationResult out;
  for (const SpirvSpecConstant& constant : declared) {
    out.constants.push_back({constant.spec_id, constant.size_bytes, constant.is_bool, constant.default_bits});
  }
  if (requested == nullptr || requested->numConstants == 0) return out;
  if (requested->pConstantIds == nullptr || requested->pConstantValues == nullptr) {
    return {ZE_RESULT_ERROR_INVALID_NULL_POINTER, "pConstantIds and pConstantValues must be set", {}};
  }

  for (std::uint32_t i = 0; i < requested->numConstants; ++i) {
    const std::uint32_t id = requested->pConstantIds[i];
    auto target = std::find_if(out.constants.begin(), out.constants.end(),
                               [id](const SpecializedConstant& c) { return c.spec_id == id; });
    if (target == out.constants.end()) {
      return {ZE_RESULT_ERROR_INVALID_ARGUMENT,
              "error: specialization constant id " + std::to_string(id) + " is not declared by the module", {}};
    }
    const void* value = requested->pConstantValues[i];
    if (value == nullptr) {
      return {ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              "error: no value for specialization constant id " + std::to_string(id), {}};
    }
    std::uint64_t bits = 0;
    std::memcpy(&bits, value, target->size_bytes);  // little-endian: the low bytes hold the value
    target->value_bits = target->is_bool ? (bits != 0) : bits;
  }
  return out;
}

}  // namespace jitcache::test_ze
