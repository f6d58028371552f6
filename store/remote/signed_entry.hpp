// A file remote's entry (store/remote/file_remote.hpp): the local store's format 2 entry file
// (store/local/entry_file.hpp: 64-byte header, sidecar JSON, binary, XXH3 checks, the key inside), and,
// when records are signed, an HMAC-SHA256 tag as the sidecar's "remote_hmac" member (64 hex):
//
//   tag = HMAC-SHA256(hmac key, "jcentry2-hmac" | key (16 bytes) | u64 LE sidecar length |
//                     u64 LE binary length | sidecar | binary)
//
// where "sidecar" is the sidecar's compact JSON without the "remote_hmac" member. A reader
// recomputes that text from what it parsed, so what it uses is exactly what was signed.
//
// A signed entry's sidecar also holds "remote_hmac_size" (64 hex), covered by the tag above:
//
//   size tag = HMAC-SHA256(hmac key, "jcentry2-size" | key (16 bytes) | u64 LE binary length)
//
// checked against the header's binary length once the header and sidecar are read, before a byte
// of the binary: a whole-looking entry of any size planted by someone without the key is refused
// for the cost of its header and sidecar, never read whole.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

inline constexpr const char* kEntryTagMember = "remote_hmac";
inline constexpr const char* kEntrySizeTagMember = "remote_hmac_size";
// The longest sidecar a signed entry's size check reads (real ones are a few KiB).
inline constexpr std::uint64_t kMaxSignedSidecarBytes = 4u << 20;

// The whole file; signed when `hmac_key` is not empty.
std::string encode_shared_entry(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
                                std::string_view hmac_key);

// Whether the first bytes of a file of `size` bytes are the header of an entry of `key` whose
// lengths add up to that size: ok, or corrupt before the rest is read (a planted 270 MiB file).
// With `hmac_key`, the sidecar's size tag must verify too: when `head` is only the header,
// `*need` is set to the header and sidecar's length (read those, then call again).
RemoteResult check_shared_entry_header(const Digest128& key, std::string_view head, std::uint64_t size,
                                       std::string_view hmac_key = {}, std::uint64_t* need = nullptr);

// ok with binary and sidecar (without the tag); corrupt (header, checksums, key, JSON) or
// bad_hmac (with a key: unsigned, or a tag that does not verify).
RemoteResult check_shared_entry(const Digest128& key, std::string bytes, std::string_view hmac_key);

}  // namespace jitcache
