#include "driver_digest.hpp"

#include <cstdio>
#include <new>

#include <xxhash.h>

namespace jitcache::test_ze {

std::string Digest::hex() const {
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return text;
}

Digest digest_of(std::span<const std::uint8_t> bytes) {
  const XXH128_hash_t hash = XXH3_128bits(bytes.data(), bytes.size());
  return {hash.high64, hash.low64};
}

DigestBuilder::DigestBuilder() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(state_);
}

DigestBuilder::~DigestBuilder() { XXH3_freeState(state_); }

DigestBuilder& DigestBuilder::add(std::span<const std::uint8_t> bytes) {
  add(static_cast<std::uint64_t>(bytes.size()));
  update(bytes.data(), bytes.size());
  return *this;
}

DigestBuilder& DigestBuilder::add(std::string_view text) {
  add(static_cast<std::uint64_t>(text.size()));
  update(text.data(), text.size());
  return *this;
}

DigestBuilder& DigestBuilder::add(std::uint64_t value) {
  update(&value, sizeof value);
  return *this;
}

Digest DigestBuilder::finish() {
  const XXH128_hash_t hash = XXH3_128bits_digest(state_);
  return {hash.high64, hash.low64};
}

void DigestBuilder::update(const void* data, std::size_t size) {
  XXH3_128bits_update(state_, data, size);
}

}  // namespace jitcache::test_ze
