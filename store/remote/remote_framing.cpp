#include "store/remote/remote_framing.hpp"

#include "store/remote/hmac_sha256.hpp"

namespace jitcache {

const char* to_string(RecordCheck check) {
  switch (check) {
    case RecordCheck::ok: return "ok";
    case RecordCheck::corrupt: return "corrupt";
    case RecordCheck::bad_hmac: return "bad_hmac";
  }
  return "?";
}

}  // namespace jitcache

namespace jitcache::remote_framing {
namespace {

constexpr std::size_t kBlobHeader = 4 + 4 + 16 + 8;

Opened refuse(RecordCheck check, std::string reason) {
  Opened opened;
  opened.check = check;
  opened.reason = std::move(reason);
  return opened;
}

}  // namespace

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

void seal(std::string& value, std::string_view hmac_key) {
  put_digest(value, xxh3_128(value));
  if (!hmac_key.empty()) value += hmac_sha256(hmac_key, value);
}

Opened open_sealed(std::string_view value, std::string_view magic, std::size_t header, std::string_view hmac_key) {
  if (value.size() < header + kChecksumSize || value.substr(0, magic.size()) != magic) {
    return refuse(RecordCheck::corrupt, "not a jitcache value of this kind (" + std::string(magic) + ")");
  }
  const bool is_signed = get_le(value, 4, 4) & kSignedFlag;
  std::string_view body = value;
  if (!hmac_key.empty()) {  // authenticity before anything else is believed
    if (!is_signed) return refuse(RecordCheck::bad_hmac, "record is not signed");
    if (value.size() < header + kChecksumSize + kHmacSha256Size) return refuse(RecordCheck::bad_hmac, "truncated tag");
    body = value.substr(0, value.size() - kHmacSha256Size);
    if (!tags_equal(hmac_sha256(hmac_key, body), value.substr(body.size()))) {
      return refuse(RecordCheck::bad_hmac, "HMAC does not verify");
    }
  } else if (is_signed) {
    if (value.size() < header + kChecksumSize + kHmacSha256Size) return refuse(RecordCheck::corrupt, "truncated tag");
    body = value.substr(0, value.size() - kHmacSha256Size);
  }
  std::string_view framed = body.substr(0, body.size() - kChecksumSize);
  if (xxh3_128(framed) != get_digest(body, framed.size())) return refuse(RecordCheck::corrupt, "checksum mismatch");
  Opened opened;
  opened.check = RecordCheck::ok;
  opened.framed = framed;
  return opened;
}

std::string encode_blob(std::string_view magic, const Digest128& id, std::string_view payload, std::string_view hmac_key) {
  std::string value;
  value.reserve(kBlobHeader + payload.size() + kChecksumSize + kHmacSha256Size);
  value += magic;
  put_le(value, hmac_key.empty() ? 0 : kSignedFlag, 4);
  put_digest(value, id);
  put_le(value, payload.size(), 8);
  value += payload;
  seal(value, hmac_key);
  return value;
}

DecodedBlob decode_blob(std::string_view magic, const Digest128& expected_id, std::string_view value,
                        std::uint64_t max_payload, std::string_view hmac_key) {
  DecodedBlob decoded;
  Opened opened = open_sealed(value, magic, kBlobHeader, hmac_key);
  if (opened.check != RecordCheck::ok) {
    decoded.check = opened.check;
    decoded.reason = std::move(opened.reason);
    return decoded;
  }
  const std::uint64_t size = get_le(opened.framed, 24, 8);
  if (size > max_payload) {
    decoded.reason = "larger than the " + std::to_string(max_payload) + "-byte cap";
    return decoded;
  }
  if (kBlobHeader + size != opened.framed.size()) {
    decoded.reason = "sizes do not match the record length";
    return decoded;
  }
  if (get_digest(opened.framed, 8) != expected_id) {
    decoded.reason = "framed for another name";
    return decoded;
  }
  decoded.payload = std::string(opened.framed.substr(kBlobHeader));
  decoded.check = RecordCheck::ok;
  return decoded;
}

}  // namespace jitcache::remote_framing
