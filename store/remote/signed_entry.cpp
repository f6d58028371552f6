#include "store/remote/signed_entry.hpp"

#include "hashing/bounded_json.hpp"
#include "store/local/entry_file.hpp"
#include "store/remote/hmac_sha256.hpp"
#include "store/remote/remote_framing.hpp"

namespace jitcache {
namespace {

std::string compact(const nlohmann::json& sidecar) {
  return sidecar.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string entry_tag_hex(const Digest128& key, std::string_view sidecar_text, std::string_view binary,
                      std::string_view hmac_key) {
  std::string signed_part = "jcentry2-hmac";
  remote_framing::put_digest(signed_part, key);
  remote_framing::put_le(signed_part, sidecar_text.size(), 8);
  remote_framing::put_le(signed_part, binary.size(), 8);
  signed_part += sidecar_text;
  signed_part += binary;
  return hmac_sha256_hex(hmac_key, signed_part);
}

std::string size_tag_hex(const Digest128& key, std::uint64_t binary_bytes, std::string_view hmac_key) {
  std::string signed_part = "jcentry2-size";
  remote_framing::put_digest(signed_part, key);
  remote_framing::put_le(signed_part, binary_bytes, 8);
  return hmac_sha256_hex(hmac_key, signed_part);
}

}  // namespace

std::string encode_shared_entry(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
                                std::string_view hmac_key) {
  nlohmann::json stored = sidecar.is_object() ? sidecar : nlohmann::json::object();
  stored.erase(kEntryTagMember);
  stored.erase(kEntrySizeTagMember);
  if (!hmac_key.empty()) {
    stored[kEntrySizeTagMember] = size_tag_hex(key, binary.size(), hmac_key);
    // Signed over the text a reader will rebuild: the JSON as parsed back (invalid UTF-8 replaced).
    const nlohmann::json reparsed = parse_untrusted_json(compact(stored));
    stored = reparsed.is_object() ? reparsed : nlohmann::json::object();
    const std::string tag = entry_tag_hex(key, compact(stored), binary, hmac_key);
    stored[kEntryTagMember] = tag;
  }
  return store_detail::encode_entry(key, compact(stored), binary);
}

RemoteResult check_shared_entry_header(const Digest128& key, std::string_view head, std::uint64_t size,
                                       std::string_view hmac_key, std::uint64_t* need) {
  std::string why;
  std::optional<store_detail::EntryHeader> header = store_detail::decode_entry_header(head, size, &why);
  if (!header) return remote_result(RemoteStatus::corrupt, why);
  if (header->key != key) return remote_result(RemoteStatus::corrupt, "the entry names another key");
  if (hmac_key.empty()) return remote_result(RemoteStatus::ok);
  if (header->sidecar_bytes > kMaxSignedSidecarBytes) {
    return remote_result(RemoteStatus::corrupt,
                         "sidecar of " + std::to_string(header->sidecar_bytes) + " bytes: refused unread");
  }
  const std::uint64_t head_bytes = store_detail::kEntryHeaderBytes + header->sidecar_bytes;
  if (head.size() < head_bytes) {
    if (!need) return remote_result(RemoteStatus::corrupt, "entry header and sidecar not read");
    *need = head_bytes;
    return remote_result(RemoteStatus::ok);
  }
  const nlohmann::json sidecar =
      parse_untrusted_json(head.substr(store_detail::kEntryHeaderBytes, static_cast<std::size_t>(header->sidecar_bytes)));
  const std::string tag = sidecar.is_object() ? string_member(sidecar, kEntrySizeTagMember) : std::string();
  if (tag.empty()) {
    return remote_result(RemoteStatus::bad_hmac, "entry carries no signed size (unsigned, or an older jitcache's): "
                                                 "refused before its binary was read");
  }
  if (!tags_equal(tag, size_tag_hex(key, header->binary_bytes, hmac_key))) {
    return remote_result(RemoteStatus::bad_hmac, "entry's signed size does not verify with this key: refused before "
                                                 "its binary was read");
  }
  return remote_result(RemoteStatus::ok);
}

RemoteResult check_shared_entry(const Digest128& key, std::string bytes, std::string_view hmac_key) {
  std::string why;
  store_detail::EntryHeader header;
  std::optional<std::string> sidecar_text = store_detail::split_entry(&bytes, key, &header, &why);
  if (!sidecar_text) return remote_result(RemoteStatus::corrupt, why);
  nlohmann::json sidecar = parse_untrusted_json(*sidecar_text);
  if (!sidecar.is_object()) return remote_result(RemoteStatus::corrupt, "sidecar is not a JSON object");
  const std::string tag = string_member(sidecar, kEntryTagMember);
  sidecar.erase(kEntryTagMember);
  if (!hmac_key.empty()) {
    if (tag.empty()) return remote_result(RemoteStatus::bad_hmac, "entry is not signed");
    if (!tags_equal(tag, entry_tag_hex(key, compact(sidecar), bytes, hmac_key))) {
      return remote_result(RemoteStatus::bad_hmac, "entry's HMAC tag does not verify with this key");
    }
  }
  sidecar.erase(kEntrySizeTagMember);  // the remote's, not the entry's
  RemoteResult loaded;
  loaded.status = RemoteStatus::ok;
  loaded.binary = std::move(bytes);
  loaded.sidecar = std::move(sidecar);
  return loaded;
}

}  // namespace jitcache
