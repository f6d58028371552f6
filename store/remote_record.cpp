#include "store/remote_record.hpp"

#include <cstdint>

#include "hashing/bounded_json.hpp"
#include "store/hmac_sha256.hpp"

namespace jitcache {
namespace {

constexpr std::string_view kMagic = "JCR1";
constexpr std::uint32_t kSignedFlag = 1;
constexpr std::size_t kHeaderSize = 4 + 4 + 16 + 4 + 8;
constexpr std::size_t kChecksumSize = 16;
constexpr std::uint64_t kMaxSidecarBytes = 16ull << 20;

void put_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

std::uint64_t get_le(std::string_view in, std::size_t offset, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::uint64_t(static_cast<unsigned char>(in[offset + i])) << (8 * i);
  return value;
}

void put_digest(std::string& out, const Digest128& digest) {
  put_le(out, digest.high, 8);
  put_le(out, digest.low, 8);
}

Digest128 get_digest(std::string_view in, std::size_t offset) { return {get_le(in, offset, 8), get_le(in, offset + 8, 8)}; }

DecodedRecord reject(RecordCheck check, std::string reason) {
  DecodedRecord decoded;
  decoded.check = check;
  decoded.reason = std::move(reason);
  return decoded;
}

}  // namespace

const char* to_string(RecordCheck check) {
  switch (check) {
    case RecordCheck::ok: return "ok";
    case RecordCheck::corrupt: return "corrupt";
    case RecordCheck::bad_hmac: return "bad_hmac";
  }
  return "?";
}

std::string encode_record(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
                          std::string_view hmac_key) {
  std::string sidecar_text = sidecar.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string record;
  record.reserve(kHeaderSize + sidecar_text.size() + binary.size() + kChecksumSize + kHmacSha256Size);
  record += kMagic;
  put_le(record, hmac_key.empty() ? 0 : kSignedFlag, 4);
  put_digest(record, key);
  put_le(record, sidecar_text.size(), 4);
  put_le(record, binary.size(), 8);
  record += sidecar_text;
  record += binary;
  put_digest(record, xxh3_128(record));
  if (!hmac_key.empty()) record += hmac_sha256(hmac_key, record);
  return record;
}

DecodedRecord decode_record(const Digest128& expected_key, std::string_view record, std::string_view hmac_key) {
  if (record.size() < kHeaderSize + kChecksumSize || record.substr(0, 4) != kMagic) {
    return reject(RecordCheck::corrupt, "not a jitcache record");
  }
  bool is_signed = get_le(record, 4, 4) & kSignedFlag;
  std::string_view body = record;
  if (!hmac_key.empty()) {  // authenticity before anything else is believed
    if (!is_signed) return reject(RecordCheck::bad_hmac, "record is not signed");
    if (record.size() < kHeaderSize + kChecksumSize + kHmacSha256Size) return reject(RecordCheck::bad_hmac, "truncated tag");
    body = record.substr(0, record.size() - kHmacSha256Size);
    if (!tags_equal(hmac_sha256(hmac_key, body), record.substr(body.size()))) {
      return reject(RecordCheck::bad_hmac, "HMAC does not verify");
    }
  } else if (is_signed) {
    if (record.size() < kHeaderSize + kChecksumSize + kHmacSha256Size) return reject(RecordCheck::corrupt, "truncated tag");
    body = record.substr(0, record.size() - kHmacSha256Size);
  }
  std::uint64_t sidecar_size = get_le(body, 24, 4);
  std::uint64_t binary_size = get_le(body, 28, 8);
  if (sidecar_size > kMaxSidecarBytes || binary_size > body.size() ||
      kHeaderSize + sidecar_size + binary_size + kChecksumSize != body.size()) {
    return reject(RecordCheck::corrupt, "sizes do not match the record length");
  }
  std::string_view framed = body.substr(0, body.size() - kChecksumSize);
  if (xxh3_128(framed) != get_digest(body, framed.size())) return reject(RecordCheck::corrupt, "checksum mismatch");
  if (get_digest(body, 8) != expected_key) return reject(RecordCheck::corrupt, "record belongs to another key");
  DecodedRecord decoded;
  decoded.sidecar = parse_untrusted_json(body.substr(kHeaderSize, sidecar_size));
  if (!decoded.sidecar.is_object()) return reject(RecordCheck::corrupt, "sidecar is not a JSON object");
  decoded.binary = std::string(body.substr(kHeaderSize + sidecar_size, binary_size));
  decoded.check = RecordCheck::ok;
  return decoded;
}

}  // namespace jitcache
