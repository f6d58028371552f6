#include "native_binary.hpp"

#include <algorithm>
#include <string_view>

#include "byte_io.hpp"

namespace jitcache::test_ze {
namespace {

constexpr std::string_view kMagic = "JCZENATV";
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kChecksumBytes = 16;
constexpr std::size_t kMaxKernelNameBytes = 4096;

NativeDecodeResult fail(std::string message) { return {std::nullopt, std::move(message)}; }

}  // namespace

std::vector<std::uint8_t> encode_native_binary(const NativeImage& image) {
  ByteWriter out;
  out.text(kMagic);
  out.u32(kFormatVersion);
  out.u32(image.driver_version);
  out.u32(image.device_id);
  out.u32(static_cast<std::uint32_t>(image.kernel_names.size()));
  out.u64(image.build_digest.high);
  out.u64(image.build_digest.low);
  out.u64(image.code.size());
  for (const std::string& name : image.kernel_names) {
    out.u32(static_cast<std::uint32_t>(name.size()));
    out.text(name);
  }
  out.bytes(image.code);
  const Digest128 checksum = xxh3_128(as_text(out.buffer()));
  out.u64(checksum.high);
  out.u64(checksum.low);
  return std::move(out.buffer());
}

NativeDecodeResult decode_native_binary(std::span<const std::uint8_t> blob) {
  if (blob.size() < kMagic.size() + kChecksumBytes ||
      !std::equal(kMagic.begin(), kMagic.end(), blob.begin())) {
    return fail("not a native binary of this driver");
  }
  const auto body = blob.first(blob.size() - kChecksumBytes);
  ByteReader trailer(blob.last(kChecksumBytes));
  const Digest128 stored{*trailer.u64(), *trailer.u64()};
  if (xxh3_128(as_text(body)) != stored) return fail("native binary is damaged (checksum mismatch)");

  ByteReader in(body.subspan(kMagic.size()));
  const auto format = in.u32();
  if (!format || *format != kFormatVersion) return fail("unsupported native binary format version");
  NativeImage image;
  const auto driver_version = in.u32();
  const auto device_id = in.u32();
  const auto kernel_count = in.u32();
  const auto digest_high = in.u64();
  const auto digest_low = in.u64();
  const auto code_size = in.u64();
  if (!driver_version || !device_id || !kernel_count || !digest_high || !digest_low || !code_size) {
    return fail("native binary header is truncated");
  }
  image.driver_version = *driver_version;
  image.device_id = *device_id;
  image.build_digest = {*digest_high, *digest_low};
  for (std::uint32_t i = 0; i < *kernel_count; ++i) {
    const auto length = in.u32();
    if (!length || *length > kMaxKernelNameBytes) return fail("native binary has a malformed kernel name");
    auto name = in.text(*length);
    if (!name) return fail("native binary kernel table is truncated");
    image.kernel_names.push_back(std::move(*name));
  }
  if (*code_size != in.remaining()) return fail("native binary code size does not match its header");
  const auto code = in.bytes(*code_size);
  image.code.assign(code->begin(), code->end());
  return {std::move(image), {}};
}

}  // namespace jitcache::test_ze
