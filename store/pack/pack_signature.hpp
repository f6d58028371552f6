// Ed25519 signatures of a pack's index, through OpenSSL's libcrypto. The index holds the SHA-256
// of every entry and of the manifest, so signing it signs the whole pack. The signature lives in
// the pack's fixed one-block signature slot (docs/pack-format.md, "Signing").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitcache::pack {

// Raw 32-byte Ed25519 public key, and its 64-hex-digit spelling used in messages and the slot.
struct PublicKey {
  std::string raw;
  std::string hex() const;
};

// From a PEM file's text: a public key ("PUBLIC KEY") or a private key (its public half).
std::optional<PublicKey> public_key_from_pem(std::string_view pem, std::string* error);

// Signs `message` with the private key in `pem`. Returns the slot text (kSignatureSlot bytes).
std::optional<std::string> sign_slot(std::string_view pem, std::string_view message, std::string* error);

// The slot's content: unsigned (no signature), or the key and signature it names.
struct SlotContent {
  bool is_signed = false;
  PublicKey key;
  std::string signature;  // 64 raw bytes
};
std::optional<SlotContent> parse_slot(std::string_view slot, std::string* error);  // nullopt: malformed
std::string unsigned_slot();

bool verify_signature(const PublicKey& key, std::string_view message, std::string_view signature);

// What is signed: a domain tag, then the index member's data.
std::string signed_message(std::string_view index_bytes);

}  // namespace jitcache::pack
