// The driver's "native binary": what zeModuleGetNativeBinary hands out and what
// ZE_MODULE_FORMAT_NATIVE accepts back. Layout (little-endian):
//
//   char[8] magic "JCZENATV" | u32 format version | u32 driver version | u32 device id
//   u32 kernel count | u64 build digest high, low | u64 code size
//   kernel count x (u32 length, name bytes) | code bytes
//   u64 checksum high, low   (XXH3-128 of everything before it)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hashing/digest.hpp"

namespace jitcache::test_ze {

struct NativeImage {
  std::uint32_t driver_version = 0;  // the driver that built it; another version refuses to load it
  std::uint32_t device_id = 0;
  Digest128 build_digest;               // of SPIR-V, build flags and specialization constants
  std::vector<std::string> kernel_names;
  std::vector<std::uint8_t> code;    // stands in for the device ISA
};

inline std::string_view as_text(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::vector<std::uint8_t> encode_native_binary(const NativeImage& image);

struct NativeDecodeResult {
  std::optional<NativeImage> image;
  std::string error;  // set when image is empty
};

// Rejects anything this driver did not write, and anything damaged since.
NativeDecodeResult decode_native_binary(std::span<const std::uint8_t> blob);

}  // namespace jitcache::test_ze
