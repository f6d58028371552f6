// The value stored under a key on the remote: binary + sidecar in one framed record.
//
//   "JCR1"                 4 bytes magic, format version 1
//   flags                  u32 LE; bit 0: an HMAC-SHA256 tag ends the record
//   key                    16 bytes: the entry's key (high, low; u64 LE each)
//   sidecar_size           u32 LE
//   binary_size            u64 LE
//   sidecar                JSON text
//   binary                 the raw binary
//   checksum               16 bytes: XXH3-128 of everything above (high, low; u64 LE)
//   [tag]                  32 bytes: HMAC-SHA256(hmac key, everything above), when flagged
//
// The key inside the record stops a valid record from being served under another key.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/remote/remote_framing.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

// Frames a record; signs it when `hmac_key` is not empty.
std::string encode_record(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
                          std::string_view hmac_key);

struct DecodedRecord {
  RecordCheck check = RecordCheck::corrupt;
  std::string reason;
  std::string binary;
  nlohmann::json sidecar;
};

// With `hmac_key` set, the tag is verified first and nothing unsigned is accepted; without it a
// tag is ignored and only the checksum protects the record (against accidents, not attackers).
DecodedRecord decode_record(const Digest128& expected_key, std::string_view record, std::string_view hmac_key);

// "<prefix>" without an HMAC key, "<prefix>:hmac-<16 hex>" with one (any remote's record namespace).
std::string remote_namespace(const RemoteConfig& config);

// A record read under `key` as a lookup takes it (decode_record): ok with the binary
// and sidecar, or corrupt / bad_hmac with the reason. Every remote's load() ends here.
RemoteResult checked_record(const Digest128& key, std::string_view value, std::string_view hmac_key);

}  // namespace jitcache
