#include "store/pack/pack_signature.hpp"

#include <memory>

#include <nlohmann/json.hpp>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "store/pack/pack_format.hpp"

namespace jitcache::pack {
namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Context = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

constexpr const char* kAlgorithm = "ed25519";

std::string to_hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : bytes) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view text) {
  if (text.size() % 2) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int high = nibble(text[i]), low = nibble(text[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

// Private key first (a key pair file also yields its public half), then a public key.
Key read_key(std::string_view pem, bool want_private) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  if (!bio) return Key(nullptr, EVP_PKEY_free);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (!key && !want_private) {
    Bio again(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
    if (again) key = PEM_read_bio_PUBKEY(again.get(), nullptr, nullptr, nullptr);
  }
  if (key && EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(key);
    key = nullptr;
  }
  return Key(key, EVP_PKEY_free);
}

std::optional<PublicKey> raw_public(EVP_PKEY* key) {
  unsigned char raw[32];
  std::size_t length = sizeof raw;
  if (EVP_PKEY_get_raw_public_key(key, raw, &length) != 1 || length != sizeof raw) return std::nullopt;
  return PublicKey{std::string(reinterpret_cast<char*>(raw), length)};
}

}  // namespace

std::string PublicKey::hex() const { return to_hex(raw); }

std::optional<PublicKey> public_key_from_pem(std::string_view pem, std::string* error) {
  Key key = read_key(pem, false);
  std::optional<PublicKey> result = key ? raw_public(key.get()) : std::nullopt;
  if (!result) *error = "not an Ed25519 key in PEM form";
  return result;
}

std::string signed_message(std::string_view index_bytes) {
  std::string message = "jitcache-pack-signature-v1";
  message.push_back('\0');
  message.append(index_bytes);
  return message;
}

std::optional<std::string> sign_slot(std::string_view pem, std::string_view message, std::string* error) {
  Key key = read_key(pem, true);
  if (!key) {
    *error = "not an Ed25519 private key in PEM form (openssl genpkey -algorithm ed25519)";
    return std::nullopt;
  }
  Context context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char signature[64];
  std::size_t length = sizeof signature;
  if (!context || EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(context.get(), signature, &length, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1) {
    *error = "signing failed";
    return std::nullopt;
  }
  std::optional<PublicKey> public_key = raw_public(key.get());
  if (!public_key) {
    *error = "could not read the public half of the key";
    return std::nullopt;
  }
  nlohmann::json slot = {{"algorithm", kAlgorithm},
                         {"public_key", public_key->hex()},
                         {"signature", to_hex(std::string_view(reinterpret_cast<char*>(signature), length))}};
  std::string text = slot.dump();
  text.resize(kSignatureSlot, ' ');
  return text;
}

std::string unsigned_slot() {
  std::string text = "{}";
  text.resize(kSignatureSlot, ' ');
  return text;
}

std::optional<SlotContent> parse_slot(std::string_view slot, std::string* error) {
  nlohmann::json parsed = nlohmann::json::parse(slot, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    *error = "signature slot is not a JSON object";
    return std::nullopt;
  }
  SlotContent content;
  if (parsed.empty()) return content;
  auto text = [&](const char* name) {
    auto it = parsed.find(name);
    return it != parsed.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (text("algorithm") != kAlgorithm) {
    *error = "signature algorithm '" + text("algorithm") + "' is not ed25519";
    return std::nullopt;
  }
  std::optional<std::string> key = from_hex(text("public_key"));
  std::optional<std::string> signature = from_hex(text("signature"));
  if (!key || key->size() != 32 || !signature || signature->size() != 64) {
    *error = "signature slot: malformed key or signature";
    return std::nullopt;
  }
  content.is_signed = true;
  content.key.raw = *key;
  content.signature = *signature;
  return content;
}

bool verify_signature(const PublicKey& key, std::string_view message, std::string_view signature) {
  Key pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                       reinterpret_cast<const unsigned char*>(key.raw.data()), key.raw.size()),
           EVP_PKEY_free);
  Context context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!pkey || !context || EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, pkey.get()) != 1) return false;
  return EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

}  // namespace jitcache::pack
