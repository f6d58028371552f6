// The test driver's "native binary": what the compile decided (device, IL digest, kernel names,
// every specialization constant's value), checksummed. Anything else is a foreign binary.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace test_il {

struct CompiledModule {
  std::string device;
  std::string il_digest;
  std::vector<std::string> kernel_names;
  std::map<std::uint32_t, std::uint64_t> spec_values;  // by SpecId, defaults included
};

std::string encode_binary(const CompiledModule& module);
std::optional<CompiledModule> decode_binary(const std::string& binary);  // nullopt: foreign or corrupt

// "7=5 9=100": the values the binary was specialized with (exposed as CL_KERNEL_ATTRIBUTES).
std::string describe_spec_values(const CompiledModule& module);

std::string fnv1a_hex(const void* data, std::size_t size);

}  // namespace test_il
