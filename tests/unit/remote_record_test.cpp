// Tests for the remote record framing (store/remote_record) and HMAC-SHA256 (store/hmac_sha256).
#include <gtest/gtest.h>

#include "hashing/digest.hpp"
#include "store/remote/hmac_sha256.hpp"
#include "store/remote/remote_record.hpp"

namespace jitcache {
namespace {

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

const Digest128 kKey{0x0123456789abcdefull, 0xfedcba9876543210ull};
const std::string kBinary = std::string("\x7f" "ELF\0\1\2binary", 13) + std::string(1000, '\xab');
const nlohmann::json kSidecar = {{"kernel_names", {"a", "b"}}, {"compile_time_us", 1234}};

TEST(HmacSha256, MatchesRfc4231TestCase2) {
  EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HmacSha256, TagsCompareByValue) {
  std::string tag = hmac_sha256("k", "data");
  EXPECT_TRUE(tags_equal(tag, hmac_sha256("k", "data")));
  EXPECT_FALSE(tags_equal(tag, hmac_sha256("k2", "data")));
  EXPECT_FALSE(tags_equal(tag, tag.substr(1)));
}

TEST(RemoteRecord, RoundTripsUnsignedAndSigned) {
  for (const std::string& hmac_key : {std::string(), std::string("secret")}) {
    std::string record = encode_record(kKey, kBinary, kSidecar, hmac_key);
    DecodedRecord decoded = decode_record(kKey, record, hmac_key);
    ASSERT_EQ(decoded.check, RecordCheck::ok) << decoded.reason;
    EXPECT_EQ(decoded.binary, kBinary);
    EXPECT_EQ(decoded.sidecar, kSidecar);
  }
}

TEST(RemoteRecord, EveryFlippedByteIsCaughtByTheChecksum) {
  std::string record = encode_record(kKey, kBinary, kSidecar, "");
  for (std::size_t i = 0; i < record.size(); i += 7) {
    std::string damaged = record;
    damaged[i] ^= 0x01;
    EXPECT_EQ(decode_record(kKey, damaged, "").check, RecordCheck::corrupt) << "byte " << i;
  }
}

TEST(RemoteRecord, TruncationAndGarbageAreCorrupt) {
  std::string record = encode_record(kKey, kBinary, kSidecar, "");
  for (std::size_t length : {std::size_t{0}, std::size_t{3}, std::size_t{40}, record.size() - 1}) {
    EXPECT_EQ(decode_record(kKey, record.substr(0, length), "").check, RecordCheck::corrupt) << length;
  }
  EXPECT_EQ(decode_record(kKey, std::string(200, 'J'), "").check, RecordCheck::corrupt);
}

TEST(RemoteRecord, ARecordServedUnderAnotherKeyIsCorrupt) {
  std::string record = encode_record(kKey, kBinary, kSidecar, "secret");
  Digest128 other{kKey.high, kKey.low + 1};
  DecodedRecord decoded = decode_record(other, record, "secret");
  EXPECT_EQ(decoded.check, RecordCheck::corrupt);
  EXPECT_NE(decoded.reason.find("another key"), std::string::npos);
}

TEST(RemoteRecord, WithAKeyOnlyGenuineSignedRecordsPass) {
  std::string genuine = encode_record(kKey, kBinary, kSidecar, "secret");
  std::string flipped = genuine;
  flipped[flipped.size() / 2] ^= 0x20;
  EXPECT_EQ(decode_record(kKey, flipped, "secret").check, RecordCheck::bad_hmac);
  // A forger can recompute the checksum but not the tag.
  EXPECT_EQ(decode_record(kKey, encode_record(kKey, "evil", kSidecar, ""), "secret").check, RecordCheck::bad_hmac);
  EXPECT_EQ(decode_record(kKey, encode_record(kKey, "evil", kSidecar, "guess"), "secret").check,
            RecordCheck::bad_hmac);
  EXPECT_EQ(decode_record(kKey, genuine.substr(0, genuine.size() - 1), "secret").check, RecordCheck::bad_hmac);
}

TEST(RemoteRecord, WithoutAKeyAForgedRecordWithAValidChecksumIsServed) {
  // The documented trust model: without JITCACHE_REMOTE_HMAC_KEY, whoever can write the server
  // decides what is served. This test pins that down so the docs stay true.
  std::string forged = encode_record(kKey, "evil", kSidecar, "");
  DecodedRecord decoded = decode_record(kKey, forged, "");
  EXPECT_EQ(decoded.check, RecordCheck::ok);
  EXPECT_EQ(decoded.binary, "evil");
  // A signed record is still readable by a node without the key (checksum only).
  EXPECT_EQ(decode_record(kKey, encode_record(kKey, kBinary, kSidecar, "secret"), "").check, RecordCheck::ok);
}

TEST(RemoteRecord, InvalidUtf8InTheSidecarIsReplacedNotThrown) {
  nlohmann::json sidecar = {{"build_log", std::string("bad \xff\xfe bytes")}};
  DecodedRecord decoded = decode_record(kKey, encode_record(kKey, kBinary, sidecar, ""), "");
  ASSERT_EQ(decoded.check, RecordCheck::ok);
  EXPECT_TRUE(decoded.sidecar["build_log"].is_string());
}

// A record from the server (hostile or damaged) whose sidecar nests a million deep: corrupt, never
// a document that overflows the stack of whatever walks it later (issue 14.6). The record is
// otherwise valid: the right key and checksum, framed as encode_record frames it.
TEST(RemoteRecord, DeeplyNestedSidecarIsCorrupt) {
  const std::string deep = "{\"a\":" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  const std::string genuine = encode_record(kKey, kBinary, nlohmann::json::object(), "");
  const std::string header = genuine.substr(0, 24);  // magic, flags, key
  std::string record = header;
  auto put_le = [&](std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) record += static_cast<char>((value >> (8 * i)) & 0xff);
  };
  put_le(deep.size(), 4);
  put_le(kBinary.size(), 8);
  record += deep;
  record += kBinary;
  const Digest128 checksum = xxh3_128(record);
  put_le(checksum.high, 8);
  put_le(checksum.low, 8);
  const DecodedRecord decoded = decode_record(kKey, record, "");
  EXPECT_EQ(decoded.check, RecordCheck::corrupt) << decoded.reason;
}

}  // namespace
}  // namespace jitcache
