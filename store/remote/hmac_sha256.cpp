#include "store/remote/hmac_sha256.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace jitcache {

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char tag[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // An empty key is still a key: pass a valid pointer so OpenSSL does not treat it as "none".
  static const unsigned char kEmpty = 0;
  const void* key_bytes = key.empty() ? static_cast<const void*>(&kEmpty) : key.data();
  if (!HMAC(EVP_sha256(), key_bytes, static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), tag, &length)) {
    return {};
  }
  return std::string(reinterpret_cast<const char*>(tag), length);
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : hmac_sha256(key, data)) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

bool tags_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace jitcache
