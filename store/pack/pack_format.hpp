// The pack format (docs/pack-format.md): an uncompressed POSIX ustar archive whose first members
// are a fixed-layout binary index, a fixed-size signature slot and a JSON manifest, followed by
// the entries as entries/<key>.json + entries/<key>.bin. `tar tf` lists it, `tar xf` unpacks it;
// jitcache reads the index (one contiguous block at a known offset) and each entry by offset
// without unpacking. Everything here is plain layout code: no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hashing/digest.hpp"

namespace jitcache::pack {

// Version 1: every checksum is SHA-256. Version 2: the index header names the checksum algorithm
// (SHA-256 or XXH3-128). A writer writes version 1 for SHA-256 packs, so every reader reads them.
inline constexpr std::uint32_t kFormatVersion = 2;
inline constexpr std::uint32_t kFirstFormatVersion = 1;
inline constexpr std::size_t kBlock = 512;  // tar block
inline constexpr char kIndexMagic[8] = {'J', 'C', 'P', 'A', 'C', 'K', 'I', 'X'};
inline constexpr std::size_t kIndexHeaderSize = 96;
inline constexpr std::size_t kRecordSize = 112;
inline constexpr std::size_t kSignatureSlot = kBlock;  // the signature member's data, exactly one block
inline constexpr std::size_t kInputRecordSize = 64;     // one row of the inputs table

inline constexpr const char* kIndexMember = "jitcache-pack/index";
inline constexpr const char* kSignatureMember = "jitcache-pack/signature";
inline constexpr const char* kManifestMember = "jitcache-pack/manifest.json";
inline constexpr const char* kEntriesFolder = "entries/";
inline constexpr const char* kInputsFolder = "inputs/";

using Sha256 = std::array<unsigned char, 32>;
// A member's checksum in the index: 32 bytes, SHA-256 or XXH3-128 (big-endian, then 16 zero bytes).
using Checksum = std::array<unsigned char, 32>;
enum class ChecksumAlgorithm : std::uint32_t { sha256 = 0, xxh3_128 = 1 };
Checksum checksum(ChecksumAlgorithm algorithm, std::string_view bytes);
const char* name_of(ChecksumAlgorithm algorithm);  // "sha256", "xxh3-128"

// Index header, little-endian, kIndexHeaderSize bytes.
struct IndexHeader {
  std::uint32_t version = kFormatVersion;
  std::uint32_t header_size = kIndexHeaderSize;
  std::uint32_t record_size = kRecordSize;  // readers accept larger records (fields appended later)
  std::uint32_t entry_count = 0;
  std::uint64_t manifest_offset = 0;  // file offsets of the manifest member's data
  std::uint64_t manifest_size = 0;
  Sha256 manifest_sha256{};
  // The optional inputs table (recorded build inputs): file offset and size of its rows, which
  // follow the entry records inside the index member (so the signature covers them); 0 = none.
  std::uint64_t inputs_offset = 0;
  std::uint64_t inputs_size = 0;
  // Version 2: bytes 88-91. Signed packs are SHA-256 only (a signature over XXH3 values would let
  // anyone craft other bytes with the same checksums); version 1 is always SHA-256.
  ChecksumAlgorithm checksum_algorithm = ChecksumAlgorithm::sha256;
};

// One index record, kRecordSize bytes, sorted by key (big-endian bytes = hex order), unique.
struct IndexRecord {
  Digest128 key;
  std::uint64_t binary_offset = 0;  // file offsets of the members' data
  std::uint64_t binary_size = 0;
  std::uint64_t sidecar_offset = 0;
  std::uint64_t sidecar_size = 0;
  Checksum binary_checksum{};
  Checksum sidecar_checksum{};
};

// One row of the inputs table, kInputRecordSize bytes, sorted by digest, unique: a recorded-inputs
// record (hashing/recorded_inputs.hpp) stored as member inputs/<digest>.rec.
struct InputIndexRecord {
  Digest128 digest;  // XXH3-128 of the record's bytes: its name in a store (inputs/<dd>/<digest>.rec)
  std::uint64_t offset = 0;  // file offset of the member's data
  std::uint64_t size = 0;
  Checksum checksum{};
};

std::string encode_header(const IndexHeader& header);
std::string encode_record(const IndexRecord& record);
// Decoders read exactly the documented bytes; callers check the sizes first.
std::optional<IndexHeader> decode_header(std::string_view bytes);  // nullopt: bad magic
IndexRecord decode_record(const unsigned char* bytes);
std::string encode_input_record(const InputIndexRecord& record);
InputIndexRecord decode_input_record(const unsigned char* bytes);
Digest128 decode_key(const unsigned char* bytes);

// A ustar member header: name and data size, or nullopt when the block is not a valid one
// (magic, checksum, size field).
struct TarMember {
  std::string name;
  std::uint64_t size = 0;
};
std::optional<TarMember> parse_tar_header(std::string_view block);
// The 512-byte ustar header of a regular file `name` (< 100 bytes) of `size` bytes (< 8 GiB),
// mode 0644, owner 0:0, as libarchive's ustar writer lays it out; nullopt when either does not fit.
std::optional<std::string> tar_header(std::string_view name, std::uint64_t size, std::int64_t mtime);

constexpr std::uint64_t padded(std::uint64_t size) { return (size + kBlock - 1) / kBlock * kBlock; }

// Offsets of the fixed members: index header at 0, index data at 512, then the signature member.
inline std::uint64_t signature_header_offset(std::uint64_t index_size) { return kBlock + padded(index_size); }
inline std::uint64_t signature_data_offset(std::uint64_t index_size) {
  return signature_header_offset(index_size) + kBlock;
}

std::string entry_member(const Digest128& key, bool binary);  // entries/<key>.bin / .json
std::string input_member(const Digest128& digest);              // inputs/<digest>.rec

Sha256 sha256(std::string_view bytes);
std::string hex(const Sha256& digest);

}  // namespace jitcache::pack
