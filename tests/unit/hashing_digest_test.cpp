#include <random>
#include <string>

#include <gtest/gtest.h>

#include "hashing/digest.hpp"

// xxhash's own scalar code, compiled into this test: the reference that the one-shot hashes
// (libxxhash's SSE2 code, or on an AVX2 CPU hashing/xxh3_avx2.c) must equal.
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_SCALAR
#include <xxhash.h>

namespace jitcache {
namespace {

std::string little_endian_u64(std::uint64_t value) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(value >> (8 * i)));
  return bytes;
}

TEST(Digest128, HexIsHighWordFirstLowercaseAndPadded) {
  const Digest128 digest{0x0123456789abcdefULL, 0xfULL};
  EXPECT_EQ(digest.hex(), "0123456789abcdef000000000000000f");
}

TEST(Digest128, FromHexRoundTrips) {
  const Digest128 digest = xxh3_128("round trip");
  EXPECT_EQ(Digest128::from_hex(digest.hex()), digest);
  EXPECT_EQ(Digest128::from_hex("0123456789ABCDEF000000000000000F"),
            (Digest128{0x0123456789abcdefULL, 0xfULL}));
}

TEST(Digest128, FromHexRejectsMalformedText) {
  EXPECT_FALSE(Digest128::from_hex(""));
  EXPECT_FALSE(Digest128::from_hex("0123456789abcdef000000000000000"));    // 31 digits
  EXPECT_FALSE(Digest128::from_hex("0123456789abcdef000000000000000f0"));  // 33 digits
  EXPECT_FALSE(Digest128::from_hex("0123456789abcdefg00000000000000f"));
  EXPECT_FALSE(Digest128::from_hex("-123456789abcdef000000000000000f"));
}

TEST(Xxh3, MatchesReferenceValues) {
  // XXH3 reference values for the empty input (xxhash test vectors).
  EXPECT_EQ(xxh3_128("").hex(), "99aa06d3014798d86001c324468d497f");
  EXPECT_EQ(hex64(xxh3_64("")), "2d06800538d394c2");
  EXPECT_NE(xxh3_128("a"), xxh3_128("b"));
  EXPECT_EQ(xxh3_128(std::string("a\0b", 3)), xxh3_128(std::string("a\0b", 3)));
  EXPECT_NE(xxh3_128(std::string("a\0b", 3)), xxh3_128("a"));
}

TEST(Xxh3, EqualsTheScalarCodeAtEveryLengthAndAlignment) {
  std::mt19937_64 random(17);
  std::string bytes(70000, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  std::vector<std::size_t> lengths = {240, 241, 1024, 1025, 4096, 16384, 65536, 65537, 69999};
  for (std::size_t length = 0; length < 2100; length += 7) lengths.push_back(length);
  for (std::size_t offset : {0, 1, 3, 8}) {
    for (std::size_t length : lengths) {
      const std::string_view input(bytes.data() + offset, std::min(length, bytes.size() - offset));
      const XXH128_hash_t expected = XXH3_128bits(input.data(), input.size());
      EXPECT_EQ(xxh3_128(input), (Digest128{expected.high64, expected.low64})) << length << " at " << offset;
      EXPECT_EQ(xxh3_64(input), XXH3_64bits(input.data(), input.size())) << length << " at " << offset;
    }
  }
}

TEST(Hex64, PadsToSixteenDigits) {
  EXPECT_EQ(hex64(0), "0000000000000000");
  EXPECT_EQ(hex64(0xabcULL), "0000000000000abc");
  EXPECT_EQ(hex64(~0ULL), "ffffffffffffffff");
}

TEST(CanonicalHasher, EncodingIsTagLittleEndianLengthAndBytes) {
  CanonicalHasher hasher;
  hasher.field(std::string_view("abc")).field(std::uint64_t{7});
  const std::string expected = std::string("\x01", 1) + little_endian_u64(3) + "abc" +
                               std::string("\x02", 1) + little_endian_u64(8) + little_endian_u64(7);
  EXPECT_EQ(hasher.finish(), xxh3_128(expected));
}

TEST(CanonicalHasher, FieldBoundariesCannotBeConfused) {
  CanonicalHasher split_late, split_early;
  split_late.field(std::string_view("ab")).field(std::string_view("c"));
  split_early.field(std::string_view("a")).field(std::string_view("bc"));
  EXPECT_NE(split_late.finish(), split_early.finish());

  CanonicalHasher one_empty, two_empty;
  one_empty.field(std::string_view(""));
  two_empty.field(std::string_view("")).field(std::string_view(""));
  EXPECT_NE(one_empty.finish(), two_empty.finish());
}

TEST(CanonicalHasher, TypesAreTagged) {
  CanonicalHasher as_number, as_bytes;
  as_number.field(std::uint64_t{0x4142434445464748ULL});
  as_bytes.field(std::string_view(little_endian_u64(0x4142434445464748ULL)));
  EXPECT_NE(as_number.finish(), as_bytes.finish());

  const Digest128 digest = xxh3_128("x");
  CanonicalHasher as_digest, as_two_numbers;
  as_digest.field(digest);
  as_two_numbers.field(digest.high).field(digest.low);
  EXPECT_NE(as_digest.finish(), as_two_numbers.finish());
}

TEST(CanonicalHasher, IsDeterministicAndSensitiveToEveryField) {
  auto hash = [](std::string_view text, std::uint64_t number, const Digest128& digest) {
    CanonicalHasher hasher;
    hasher.field(text).field(number).field(digest);
    return hasher.finish();
  };
  const Digest128 base = hash("text", 1, Digest128{1, 2});
  EXPECT_EQ(base, hash("text", 1, Digest128{1, 2}));
  EXPECT_NE(base, hash("texT", 1, Digest128{1, 2}));
  EXPECT_NE(base, hash("text", 2, Digest128{1, 2}));
  EXPECT_NE(base, hash("text", 1, Digest128{1, 3}));
  EXPECT_NE(base, hash("text", 1, Digest128{2, 2}));
}

}  // namespace
}  // namespace jitcache
