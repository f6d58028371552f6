// Store format 2: one file per entry (docs/store-format.md, "Entry files").
//
//   <root>/<k0k1>/<k2k3>/<key>.entry = header (64 bytes) | sidecar JSON | binary
//
// The header: magic "jcentry2", sidecar length, binary length (little-endian 64-bit each), the
// key (16 bytes), XXH3-64 of the sidecar, XXH3-64 of the binary, XXH3-64 of the 56 bytes before
// it. One rename commits the entry, one unlink evicts it, one open and one read serve it.
// Everything here works on bytes only: the caller opens the file through the held root.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hashing/digest.hpp"

namespace jitcache::store_detail {

inline constexpr std::uint64_t kMaxSidecarBytes = 16ull << 20;  // far above any real sidecar
// An entry file: header, sidecar and a binary up to 1 GiB (the largest max_entry_size one sets).
inline constexpr std::uint64_t kMaxEntryFileBytes = (1ull << 30) + kMaxSidecarBytes + 64;

inline constexpr std::string_view kEntryMagic = "jcentry2";
inline constexpr std::size_t kEntryHeaderBytes = 64;

struct EntryHeader {
  std::uint64_t sidecar_bytes = 0;
  std::uint64_t binary_bytes = 0;
  Digest128 key;
  std::uint64_t sidecar_xxh3 = 0;
  std::uint64_t binary_xxh3 = 0;
};

// The whole file for `key`.
std::string encode_entry(const Digest128& key, std::string_view sidecar, std::string_view binary);

// The header at the start of `bytes`, checked (magic, its own checksum, lengths that add up to
// `file_size` without overflow); nullopt with `why` otherwise.
std::optional<EntryHeader> decode_entry_header(std::string_view bytes, std::uint64_t file_size, std::string* why);

// A whole file's parts, checked against its header, the key it must name and both checksums.
// On success `file` is cut down to the binary in place (no copy) and the sidecar is returned.
std::optional<std::string> split_entry(std::string* file, const Digest128& key, EntryHeader* header, std::string* why);

}  // namespace jitcache::store_detail
