// XXH3 digests and the length-prefixed canonical encoder every key is built from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jitcache {

struct Digest128 {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  std::string hex() const;  // 32 lowercase hex digits, high word first
  static std::optional<Digest128> from_hex(std::string_view text);
  friend bool operator==(const Digest128&, const Digest128&) = default;
  friend auto operator<=>(const Digest128&, const Digest128&) = default;
};

Digest128 xxh3_128(std::string_view bytes);
std::uint64_t xxh3_64(std::string_view bytes);
std::string hex64(std::uint64_t value);  // 16 lowercase hex digits
// A name replaced by its hash ("h" + hex64 of XXH3-64), as `jitcache pack --obfuscate` writes it:
// whoever knows the name (the shim, given a kernel) can still find what is filed under it.
std::string obfuscated_name(std::string_view name);

// Streams fields into XXH3-128 with a type tag and a length before every value, so that no two
// different field sequences can encode to the same byte stream ("ab","c" != "a","bc").
class CanonicalHasher {
 public:
  CanonicalHasher();
  ~CanonicalHasher();
  CanonicalHasher(const CanonicalHasher&) = delete;
  CanonicalHasher& operator=(const CanonicalHasher&) = delete;

  CanonicalHasher& field(std::string_view bytes);
  CanonicalHasher& field(std::uint64_t value);
  CanonicalHasher& field(const Digest128& digest);
  Digest128 finish();

 private:
  void update(const void* data, std::size_t size);
  void write_tagged(std::uint8_t tag, std::string_view payload);  // tag, LE length, payload
  void* state_;  // XXH3_state_t*, kept opaque so xxhash.h stays out of this header
};

}  // namespace jitcache
