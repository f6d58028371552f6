// What the remote's framed values share: little-endian fields, the XXH3-128 checksum that ends the
// body, and the HMAC-SHA256 tag after it when the value is signed (store/remote/remote_record.hpp frames
// entries with it; store/remote/remote_programs.hpp frames input records and program summaries).
//
// A blob (one payload under a 16-byte id) is framed as:
//   magic                  4 bytes: what the value is and its format version ("JCI1", "JCP1")
//   flags                  u32 LE; bit 0: an HMAC-SHA256 tag ends the value
//   id                     16 bytes: the name it belongs under (high, low; u64 LE each)
//   payload_size           u64 LE
//   payload
//   checksum               16 bytes: XXH3-128 of everything above
//   [tag]                  32 bytes: HMAC-SHA256(hmac key, everything above), when flagged
// The magic is under the tag, so a signed value of one kind is never accepted as another.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hashing/digest.hpp"
namespace jitcache {

// What a check of a framed value found.
enum class RecordCheck {
  ok,
  corrupt,      // malformed, truncated, wrong key or checksum mismatch
  bad_hmac,     // an HMAC key is configured and the record is unsigned or its tag does not verify
};
const char* to_string(RecordCheck check);

}  // namespace jitcache

namespace jitcache::remote_framing {

inline constexpr std::uint32_t kSignedFlag = 1;
inline constexpr std::size_t kChecksumSize = 16;

void put_le(std::string& out, std::uint64_t value, int bytes);
std::uint64_t get_le(std::string_view in, std::size_t offset, int bytes);
void put_digest(std::string& out, const Digest128& digest);
Digest128 get_digest(std::string_view in, std::size_t offset);

// Appends the checksum of `value`, then the tag when `hmac_key` is set (the flag must say so).
void seal(std::string& value, std::string_view hmac_key);

struct Opened {
  RecordCheck check = RecordCheck::corrupt;
  std::string reason;
  std::string_view framed;  // the value without its checksum and tag, once both verified
};

// Authenticity first (with `hmac_key`, nothing unsigned is accepted), then the checksum. `header`:
// the smallest framed part a value of this kind has; `magic`: its first 4 bytes.
Opened open_sealed(std::string_view value, std::string_view magic, std::size_t header, std::string_view hmac_key);

std::string encode_blob(std::string_view magic, const Digest128& id, std::string_view payload, std::string_view hmac_key);

struct DecodedBlob {
  RecordCheck check = RecordCheck::corrupt;
  std::string reason;
  std::string payload;
};

// Refuses a value of another kind, one over `max_payload`, one framed for another id.
DecodedBlob decode_blob(std::string_view magic, const Digest128& expected_id, std::string_view value,
                        std::uint64_t max_payload, std::string_view hmac_key);

}  // namespace jitcache::remote_framing
