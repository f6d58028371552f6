#include "store/remote/remote_record.hpp"

#include <cstdint>

#include "hashing/bounded_json.hpp"
#include "store/remote/hmac_sha256.hpp"
#include "store/remote/remote_framing.hpp"

namespace jitcache {
namespace {

using namespace remote_framing;

constexpr std::string_view kMagic = "JCR1";
constexpr std::size_t kHeaderSize = 4 + 4 + 16 + 4 + 8;
constexpr std::uint64_t kMaxSidecarBytes = 16ull << 20;

DecodedRecord reject(RecordCheck check, std::string reason) {
  DecodedRecord decoded;
  decoded.check = check;
  decoded.reason = std::move(reason);
  return decoded;
}

}  // namespace

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
  seal(record, hmac_key);
  return record;
}

DecodedRecord decode_record(const Digest128& expected_key, std::string_view record, std::string_view hmac_key) {
  Opened opened = open_sealed(record, kMagic, kHeaderSize, hmac_key);
  if (opened.check != RecordCheck::ok) return reject(opened.check, std::move(opened.reason));
  std::string_view framed = opened.framed;
  std::uint64_t sidecar_size = get_le(framed, 24, 4);
  std::uint64_t binary_size = get_le(framed, 28, 8);
  if (sidecar_size > kMaxSidecarBytes || binary_size > framed.size() ||
      kHeaderSize + sidecar_size + binary_size != framed.size()) {
    return reject(RecordCheck::corrupt, "sizes do not match the record length");
  }
  if (get_digest(framed, 8) != expected_key) return reject(RecordCheck::corrupt, "record belongs to another key");
  DecodedRecord decoded;
  decoded.sidecar = parse_untrusted_json(framed.substr(kHeaderSize, sidecar_size));
  if (!decoded.sidecar.is_object()) return reject(RecordCheck::corrupt, "sidecar is not a JSON object");
  decoded.binary = std::string(framed.substr(kHeaderSize + sidecar_size, binary_size));
  decoded.check = RecordCheck::ok;
  return decoded;
}

// Signed and unsigned records live apart, and so do records signed with different keys: a node
// never overwrites (or is made to rebuild) a record that another kind of node wrote. The
// namespace names the HMAC key by a tag of a fixed text, which tells nothing about the key.
std::string remote_namespace(const RemoteConfig& config) {
  if (config.hmac_key.empty()) return config.prefix;
  std::string tag = hmac_sha256(config.hmac_key, "jitcache remote namespace v1");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = config.prefix + ":hmac-";
  for (std::size_t i = 0; i < 8 && i < tag.size(); ++i) {
    name += kHex[static_cast<unsigned char>(tag[i]) >> 4];
    name += kHex[static_cast<unsigned char>(tag[i]) & 15];
  }
  return name;
}

RemoteResult checked_record(const Digest128& key, std::string_view value, std::string_view hmac_key) {
  DecodedRecord decoded = decode_record(key, value, hmac_key);
  if (decoded.check == RecordCheck::corrupt) return remote_result(RemoteStatus::corrupt, decoded.reason);
  if (decoded.check == RecordCheck::bad_hmac) return remote_result(RemoteStatus::bad_hmac, decoded.reason);
  RemoteResult hit = remote_result(RemoteStatus::ok);
  hit.binary = std::move(decoded.binary);
  hit.sidecar = std::move(decoded.sidecar);
  return hit;
}

}  // namespace jitcache
