// Writing a pack (docs/pack-format.md), a ustar archive: the members are laid out exactly as the
// format fixes them, so the index written first can hold the offsets of the entries
// that follow. Written to a temp file next to the target and renamed into place: a reader that has
// the old file open keeps reading the old file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/pack/pack_format.hpp"

namespace jitcache {

struct PackEntry {
  Digest128 key;
  nlohmann::json sidecar;  // as the store holds it (with key, binary_size, binary_xxh3_64)
  std::string binary;
};

// A recorded-inputs record (hashing/recorded_inputs.hpp) the entries' sidecars name ("inputs").
struct PackInput {
  Digest128 digest;  // XXH3-128 of `bytes`
  std::string bytes;
};

struct PackWriteOptions {
  std::string producer;         // e.g. "jitcache 0.4.0 pack create"
  std::string signing_key_pem;  // empty: unsigned
  // The index's checksums in an unsigned pack (format version 2 for XXH3-128, 1 for SHA-256). A
  // signed pack is always SHA-256: the signature vouches for the checksums, and XXH3 is no defence
  // against crafted bytes.
  pack::ChecksumAlgorithm unsigned_checksum = pack::ChecksumAlgorithm::xxh3_128;
  nlohmann::json extra_manifest = nlohmann::json::object();  // merged into the manifest (sources, notes)
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// What the manifest says of these entries: counts, bytes, devices, compiler identities, APIs.
nlohmann::json describe_entries(const std::vector<PackEntry>& entries);

// Entries must have unique keys, inputs unique digests (any order). Returns false + `error` on
// failure; nothing is left at `path` then (an existing file there is untouched). Every member is
// hashed as it is written (one pass over the bytes); the index, written first with room for the
// digests, is filled in at the end.
// The entries are read in place (never copied or changed).
bool write_pack(const std::filesystem::path& path, const std::vector<PackEntry>& entries,
                const std::vector<PackInput>& inputs, const PackWriteOptions& options, std::string* error);
inline bool write_pack(const std::filesystem::path& path, const std::vector<PackEntry>& entries,
                       const PackWriteOptions& options, std::string* error) {
  return write_pack(path, entries, {}, options, error);
}

// Rewrites `path` with its signature slot holding a signature by `signing_key_pem` (same bytes
// otherwise, except that an XXH3-128 pack's checksums become SHA-256: format version 1). The pack is
// checked first, every entry and record in full: a damaged pack is not signed.
bool sign_pack(const std::filesystem::path& path, const std::string& signing_key_pem, std::string* error);

}  // namespace jitcache
