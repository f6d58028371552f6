// HMAC-SHA256 (OpenSSL libcrypto) for signing remote records.
#pragma once

#include <string>
#include <string_view>

namespace jitcache {

inline constexpr std::size_t kHmacSha256Size = 32;

// The 32-byte tag of `data` under `key`.
std::string hmac_sha256(std::string_view key, std::string_view data);

// The same tag as 64 lowercase hex digits (for text records: sidecars, leases).
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

// Compares two tags in time that does not depend on where they differ.
bool tags_equal(std::string_view a, std::string_view b);

}  // namespace jitcache
