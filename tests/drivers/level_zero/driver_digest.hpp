// 128-bit digests that name builds and let the driver recognise damaged native binaries.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

struct XXH3_state_s;

namespace jitcache::test_ze {

struct Digest {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  std::string hex() const;  // 32 lowercase hex digits, high word first
  friend bool operator==(const Digest&, const Digest&) = default;
};

Digest digest_of(std::span<const std::uint8_t> bytes);

// Length-prefixes every field, so that ("ab", "c") and ("a", "bc") digest differently.
class DigestBuilder {
 public:
  DigestBuilder();
  ~DigestBuilder();
  DigestBuilder(const DigestBuilder&) = delete;
  DigestBuilder& operator=(const DigestBuilder&) = delete;

  DigestBuilder& add(std::span<const std::uint8_t> bytes);
  DigestBuilder& add(std::string_view text);
  DigestBuilder& add(std::uint64_t value);
  Digest finish();

 private:
  void update(const void* data, std::size_t size);
  XXH3_state_s* state_;
};

}  // namespace jitcache::test_ze
