// libFuzzer target for the SPIR-V reader: any byte string must be read or refused with a message,
// never crash, hang or read out of bounds (built with ASan + UBSan, see CMakeLists.txt).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "hashing/spirv_module.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const jitcache::SpirvReadResult result = jitcache::read_spirv_module(std::span(data, size));
  if (result.info.has_value() == !result.error.empty()) std::abort();  // exactly one of the two
  if (result.info) {
    std::uint32_t previous_id = 0;
    for (std::size_t i = 0; i < result.info->spec_constants.size(); ++i) {
      const jitcache::SpirvSpecConstant& constant = result.info->spec_constants[i];
      if (i > 0 && constant.spec_id <= previous_id) std::abort();  // sorted, unique
      if (constant.size_bytes != 1 && constant.size_bytes != 2 && constant.size_bytes != 4 &&
          constant.size_bytes != 8) {
        std::abort();
      }
      if (jitcache::find_spec_constant(*result.info, constant.spec_id) == nullptr) std::abort();
      previous_id = constant.spec_id;
    }
  }
  return 0;
}
