// Turns zeModuleCreate input into a module image: "compiles" SPIR-V (slow, logged) or loads a
// native binary this driver produced earlier (cheap).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <ze_api.h>

namespace jitcache::test_ze {

struct BuildOutcome {
  ze_result_t result = ZE_RESULT_SUCCESS;
  std::string log;  // build log text; empty after a clean build, as with real drivers
  std::vector<std::uint8_t> native_binary;
  std::vector<std::string> kernel_names;
};

BuildOutcome compile_spirv(std::span<const std::uint8_t> spirv, const char* build_flags,
                           const ze_module_constants_t* constants);

BuildOutcome load_native_binary(std::span<const std::uint8_t> blob);

}  // namespace jitcache::test_ze
