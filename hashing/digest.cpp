#include "hashing/digest.hpp"

#include <algorithm>
#include <array>
#include <new>

#include <xxhash.h>

#if JITCACHE_XXH3_AVX2
#include "hashing/xxh3_avx2.h"
#endif

namespace jitcache {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Type tags of the canonical encoding: a u64 and an 8-byte string must not encode alike.
enum class FieldTag : std::uint8_t { bytes = 1, u64 = 2, digest = 3 };

void append_hex64(std::string& out, std::uint64_t value) {
  for (int shift = 60; shift >= 0; shift -= 4) out.push_back(kHexDigits[(value >> shift) & 0xf]);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::uint64_t> parse_hex64(std::string_view text) {
  std::uint64_t value = 0;
  for (char c : text) {
    const int digit = hex_value(c);
    if (digit < 0) return std::nullopt;
    value = (value << 4) | static_cast<std::uint64_t>(digit);
  }
  return value;
}

// Explicit little-endian so the encoding (and thus every key) is the same on any host.
std::array<unsigned char, 8> little_endian(std::uint64_t value) {
  std::array<unsigned char, 8> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  return bytes;
}

XXH3_state_t* as_state(void* state) { return static_cast<XXH3_state_t*>(state); }

#if JITCACHE_XXH3_AVX2
// Inputs up to 240 bytes take XXH3's scalar path in either build; longer ones the vector loop.
constexpr std::size_t kVectorPathFrom = 241;
bool use_avx2(std::size_t size) {
  static const bool cpu_has_avx2 = [] {
    __builtin_cpu_init();  // may run before libgcc's own initialiser (a constructor of the shim)
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return size >= kVectorPathFrom && cpu_has_avx2;
}
#endif

}  // namespace

std::string Digest128::hex() const {
  std::string out;
  out.reserve(32);
  append_hex64(out, high);
  append_hex64(out, low);
  return out;
}

std::optional<Digest128> Digest128::from_hex(std::string_view text) {
  if (text.size() != 32) return std::nullopt;
  const auto high = parse_hex64(text.substr(0, 16));
  const auto low = parse_hex64(text.substr(16));
  if (!high || !low) return std::nullopt;
  return Digest128{*high, *low};
}

Digest128 xxh3_128(std::string_view bytes) {
#if JITCACHE_XXH3_AVX2
  if (use_avx2(bytes.size())) {
    Digest128 digest;
    jitcache_xxh3_128_avx2(bytes.data(), bytes.size(), &digest.high, &digest.low);
    return digest;
  }
#endif
  const XXH128_hash_t hash = XXH3_128bits(bytes.data(), bytes.size());
  return Digest128{hash.high64, hash.low64};
}

std::uint64_t xxh3_64(std::string_view bytes) {
#if JITCACHE_XXH3_AVX2
  if (use_avx2(bytes.size())) return jitcache_xxh3_64_avx2(bytes.data(), bytes.size());
#endif
  return XXH3_64bits(bytes.data(), bytes.size());
}

std::string hex64(std::uint64_t value) {
  std::string out;
  out.reserve(16);
  append_hex64(out, value);
  return out;
}

CanonicalHasher::CanonicalHasher() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(as_state(state_));
}

CanonicalHasher::~CanonicalHasher() { XXH3_freeState(as_state(state_)); }

void CanonicalHasher::update(const void* data, std::size_t size) {
  XXH3_128bits_update(as_state(state_), data, size);
}

// tag (1 byte) + length (8 bytes LE) + payload: field boundaries cannot be confused.
void CanonicalHasher::write_tagged(std::uint8_t tag, std::string_view payload) {
  const auto length = little_endian(payload.size());
  update(&tag, 1);
  update(length.data(), length.size());
  update(payload.data(), payload.size());
}

CanonicalHasher& CanonicalHasher::field(std::string_view bytes) {
  write_tagged(static_cast<std::uint8_t>(FieldTag::bytes), bytes);
  return *this;
}

CanonicalHasher& CanonicalHasher::field(std::uint64_t value) {
  const auto bytes = little_endian(value);
  write_tagged(static_cast<std::uint8_t>(FieldTag::u64),
               {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  return *this;
}

CanonicalHasher& CanonicalHasher::field(const Digest128& digest) {
  std::array<unsigned char, 16> bytes{};
  const auto high = little_endian(digest.high);
  const auto low = little_endian(digest.low);
  std::copy(high.begin(), high.end(), bytes.begin());
  std::copy(low.begin(), low.end(), bytes.begin() + 8);
  write_tagged(static_cast<std::uint8_t>(FieldTag::digest),
               {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  return *this;
}

Digest128 CanonicalHasher::finish() {
  const XXH128_hash_t hash = XXH3_128bits_digest(as_state(state_));
  return Digest128{hash.high64, hash.low64};
}

std::string obfuscated_name(std::string_view name) { return "h" + hex64(xxh3_64(name)); }

}  // namespace jitcache
