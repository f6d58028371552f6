#include "module_builder.hpp"

#include "compile_cost.hpp"
#include "compile_log.hpp"
#include "driver_identity.hpp"
#include "driver_settings.hpp"
#include "native_binary.hpp"
#include "hashing/digest.hpp"
#include "hashing/spirv_module.hpp"
#include "specialization.hpp"

namespace jitcache::test_ze {
namespace {

BuildOutcome failure(ze_result_t result, std::string log) { return {result, std::move(log), {}, {}}; }

// Names the build: the same SPIR-V, flags and effective constants always give the same digest.
Digest128 build_digest(std::span<const std::uint8_t> spirv, std::string_view flags,
                       const std::vector<SpecializedConstant>& constants) {
  CanonicalHasher digest;
  digest.field(std::string_view("jitcache-test-ze-build-v1")).field(as_text(spirv)).field(flags);
  digest.field(static_cast<std::uint64_t>(constants.size()));
  for (const SpecializedConstant& constant : constants) {
    digest.field(std::uint64_t{constant.spec_id}).field(std::uint64_t{constant.size_bytes}).field(constant.value_bits);
  }
  return digest.finish();
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The stand-in ISA: the SPIR-V scrambled by a keystream drawn from the build digest, so the code
// is as large as the input and differs whenever the digest does.
std::vector<std::uint8_t> generate_code(std::span<const std::uint8_t> spirv, const Digest128& digest) {
  std::vector<std::uint8_t> code(spirv.begin(), spirv.end());
  std::uint64_t state = digest.high ^ digest.low;
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (i % 8 == 0) key = splitmix64(state);
    code[i] ^= static_cast<std::uint8_t>(key >> (8 * (i % 8)));
  }
  return code;
}

}  // namespace

BuildOutcome compile_spirv(std::span<const std::uint8_t> spirv, const char* build_flags,
                           const ze_module_constants_t* constants) {
  SpirvReadResult read = read_spirv_module(spirv);
  if (!read.info) return failure(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "error: " + read.error);
  if (read.info->version_major != kMaxSpirvMajor || read.info->version_minor > kMaxSpirvMinor) {
    return failure(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
                   "error: unsupported SPIR-V version " + std::to_string(read.info->version_major) + "." +
                       std::to_string(read.info->version_minor));
  }
  SpecializationResult specialized = specialize(read.info->spec_constants, constants);
  if (specialized.result != ZE_RESULT_SUCCESS) return failure(specialized.result, specialized.error);

  const std::string_view flags = build_flags != nullptr ? build_flags : "";
  const Digest128 digest = build_digest(spirv, flags, specialized.constants);
  burn_compile_time(spirv, compile_cost_scale());

  const TargetIdentity target = current_target();
  NativeImage image{target.driver_version, target.device_id, digest, read.info->kernel_names,
                    generate_code(spirv, digest)};
  if (!record_compile(digest.hex())) {
    return failure(ZE_RESULT_ERROR_UNKNOWN, "error: cannot append to JITCACHE_TEST_ZE_COMPILE_LOG");
  }
  // Like a real compiler, the SPIR-V compile says something; loading a native binary says nothing.
  std::string log = "compiled " + std::to_string(spirv.size()) + " bytes of SPIR-V";
  return {ZE_RESULT_SUCCESS, std::move(log), encode_native_binary(image), std::move(read.info->kernel_names)};
}

BuildOutcome load_native_binary(std::span<const std::uint8_t> blob) {
  NativeDecodeResult decoded = decode_native_binary(blob);
  if (!decoded.image) return failure(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "error: " + decoded.error);
  const TargetIdentity target = current_target();
  if (decoded.image->driver_version != target.driver_version) {
    return failure(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY,
                   "error: native binary was built by driver version " +
                       std::to_string(decoded.image->driver_version) + ", this is " +
                       std::to_string(target.driver_version));
  }
  if (decoded.image->device_id != target.device_id) {
    return failure(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "error: native binary targets another device");
  }
  return {ZE_RESULT_SUCCESS, {}, std::vector<std::uint8_t>(blob.begin(), blob.end()),
          std::move(decoded.image->kernel_names)};
}

}  // namespace jitcache::test_ze
