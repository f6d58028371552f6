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

}  // namespace

std::string encode_shared_entry(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
                                std::string_view hmac_key) {
  nlohmann::json stored = sidecar.is_object() ? sidecar : nlohmann::json::object();
  stored.erase(kEntryTagMember);
  if (!hmac_key.empty()) {
    // Signed over the text a reader will rebuild: the JSON as parsed back (invalid UTF-8 replaced).
    const nlohmann::json reparsed = parse_untrusted_json(compact(stored));
    stored = reparsed.is_object() ? reparsed : nlohmann::json::object();
    const std::string tag = entry_tag_hex(key, compact(stored), binary, hmac_key);
    stored[kEntryTagMember] = tag;
  }
  return store_detail::encode_entry(key, compact(stored), binary);
}

RemoteResult check_shared_entry_header(const Digest128& key, std::string_view head, std::uint64_t size) {
  std::string why;
  std::optional<store_detail::EntryHeader> header = store_detail::decode_entry_header(head, size, &why);
  if (!header) return remote_result(RemoteStatus::corrupt, why);
  if (header->key != key) return remote_result(RemoteStatus::corrupt, "the entry names another key");
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
  RemoteResult loaded;
  loaded.status = RemoteStatus::ok;
  loaded.binary = std::move(bytes);
  loaded.sidecar = std::move(sidecar);
  return loaded;
}

}  // namespace jitcache
