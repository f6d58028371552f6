#include "store/pack/pack_format.hpp"

#include <cstring>

#include <openssl/sha.h>

namespace jitcache::pack {
namespace {

void put_u32(std::string* out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void put_u64(std::string* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void put_be64(std::string* out, std::uint64_t value) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void put_sha(std::string* out, const Sha256& digest) { out->append(reinterpret_cast<const char*>(digest.data()), 32); }

std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}
std::uint64_t get_be64(const unsigned char* p) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | p[i];
  return value;
}
Sha256 get_sha(const unsigned char* p) {
  Sha256 digest;
  std::memcpy(digest.data(), p, 32);
  return digest;
}

// A NUL- or space-terminated octal field; nullopt on anything else.
std::optional<std::uint64_t> octal(std::string_view field) {
  std::size_t at = 0;
  while (at < field.size() && field[at] == ' ') ++at;
  std::uint64_t value = 0;
  bool any = false;
  for (; at < field.size() && field[at] >= '0' && field[at] <= '7'; ++at) {
    if (value >> 60) return std::nullopt;
    value = value * 8 + static_cast<std::uint64_t>(field[at] - '0');
    any = true;
  }
  for (; at < field.size(); ++at) {
    if (field[at] != ' ' && field[at] != '\0') return std::nullopt;
  }
  if (!any) return std::nullopt;
  return value;
}

std::string c_string(std::string_view field) { return std::string(field.substr(0, field.find('\0'))); }

}  // namespace

std::string encode_header(const IndexHeader& header) {
  std::string out(kIndexMagic, sizeof kIndexMagic);
  put_u32(&out, header.version);
  put_u32(&out, header.header_size);
  put_u32(&out, header.record_size);
  put_u32(&out, header.entry_count);
  put_u64(&out, header.manifest_offset);
  put_u64(&out, header.manifest_size);
  put_sha(&out, header.manifest_sha256);
  put_u64(&out, header.inputs_offset);
  put_u64(&out, header.inputs_size);
  if (header.version >= 2) put_u32(&out, static_cast<std::uint32_t>(header.checksum_algorithm));
  out.resize(kIndexHeaderSize, '\0');  // reserved
  return out;
}

std::string encode_record(const IndexRecord& record) {
  std::string out;
  put_be64(&out, record.key.high);
  put_be64(&out, record.key.low);
  put_u64(&out, record.binary_offset);
  put_u64(&out, record.binary_size);
  put_u64(&out, record.sidecar_offset);
  put_u64(&out, record.sidecar_size);
  put_sha(&out, record.binary_checksum);
  put_sha(&out, record.sidecar_checksum);
  return out;
}

std::string encode_input_record(const InputIndexRecord& record) {
  std::string out;
  put_be64(&out, record.digest.high);
  put_be64(&out, record.digest.low);
  put_u64(&out, record.offset);
  put_u64(&out, record.size);
  put_sha(&out, record.checksum);
  return out;
}

InputIndexRecord decode_input_record(const unsigned char* p) {
  InputIndexRecord record;
  record.digest = decode_key(p);
  record.offset = get_u64(p + 16);
  record.size = get_u64(p + 24);
  record.checksum = get_sha(p + 32);
  return record;
}

std::optional<IndexHeader> decode_header(std::string_view bytes) {
  if (bytes.size() < kIndexHeaderSize || std::memcmp(bytes.data(), kIndexMagic, sizeof kIndexMagic) != 0) {
    return std::nullopt;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  IndexHeader header;
  header.version = get_u32(p + 8);
  header.header_size = get_u32(p + 12);
  header.record_size = get_u32(p + 16);
  header.entry_count = get_u32(p + 20);
  header.manifest_offset = get_u64(p + 24);
  header.manifest_size = get_u64(p + 32);
  header.manifest_sha256 = get_sha(p + 40);
  header.inputs_offset = get_u64(p + 72);
  header.inputs_size = get_u64(p + 80);
  // Version 1 reserved these bytes (zero): SHA-256. An unknown value is left for the reader to refuse.
  if (header.version >= 2) header.checksum_algorithm = static_cast<ChecksumAlgorithm>(get_u32(p + 88));
  return header;
}

Digest128 decode_key(const unsigned char* bytes) { return {get_be64(bytes), get_be64(bytes + 8)}; }

IndexRecord decode_record(const unsigned char* p) {
  IndexRecord record;
  record.key = decode_key(p);
  record.binary_offset = get_u64(p + 16);
  record.binary_size = get_u64(p + 24);
  record.sidecar_offset = get_u64(p + 32);
  record.sidecar_size = get_u64(p + 40);
  record.binary_checksum = get_sha(p + 48);
  record.sidecar_checksum = get_sha(p + 80);
  return record;
}

std::optional<TarMember> parse_tar_header(std::string_view block) {
  if (block.size() < kBlock || block.substr(257, 5) != "ustar") return std::nullopt;
  // The checksum: the sum of all bytes with the checksum field itself counted as spaces.
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    sum += (i >= 148 && i < 156) ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(block[i]);
  }
  std::optional<std::uint64_t> recorded = octal(block.substr(148, 8));
  std::optional<std::uint64_t> size = octal(block.substr(124, 12));
  if (!recorded || *recorded != sum || !size) return std::nullopt;
  TarMember member;
  const std::string prefix = c_string(block.substr(345, 155));
  member.name = (prefix.empty() ? "" : prefix + "/") + c_string(block.substr(0, 100));
  member.size = *size;
  return member;
}

namespace {
// `value` as `width - 1` octal digits and a NUL, at `field`.
void put_octal(char* field, std::size_t width, std::uint64_t value) {
  field[width - 1] = '\0';
  for (std::size_t i = width - 1; i-- > 0; value >>= 3) field[i] = static_cast<char>('0' + (value & 7));
}
}  // namespace

std::optional<std::string> tar_header(std::string_view name, std::uint64_t size, std::int64_t mtime) {
  if (name.empty() || name.size() >= 100 || size >= (1ull << 33) || mtime < 0 || mtime >= (1ll << 33)) {
    return std::nullopt;
  }
  std::string block(kBlock, '\0');
  char* p = block.data();
  std::memcpy(p, name.data(), name.size());
  put_octal(p + 100, 8, 0644);  // mode
  put_octal(p + 108, 8, 0);     // uid
  put_octal(p + 116, 8, 0);     // gid
  put_octal(p + 124, 12, size);
  put_octal(p + 136, 12, static_cast<std::uint64_t>(mtime));
  p[156] = '0';  // a regular file
  std::memcpy(p + 257, "ustar\0" "00", 8);
  put_octal(p + 329, 8, 0);  // devmajor
  put_octal(p + 337, 8, 0);  // devminor
  // The checksum: every byte summed with the field itself as spaces; six digits, NUL, space.
  std::memset(p + 148, ' ', 8);
  std::uint64_t sum = 0;
  for (unsigned char byte : block) sum += byte;
  put_octal(p + 148, 7, sum);
  return block;
}

std::string entry_member(const Digest128& key, bool binary) {
  return std::string(kEntriesFolder) + key.hex() + (binary ? ".bin" : ".json");
}

std::string input_member(const Digest128& digest) { return std::string(kInputsFolder) + digest.hex() + ".rec"; }

// OpenSSL's one-shot: it uses the CPU's SHA extensions (SHA-NI) where present. The low-level
// SHA256_Init/Update/Final path measured no faster here.
Sha256 sha256(std::string_view bytes) {
  Sha256 digest;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest.data());
  return digest;
}

Checksum checksum(ChecksumAlgorithm algorithm, std::string_view bytes) {
  if (algorithm == ChecksumAlgorithm::sha256) return sha256(bytes);
  const Digest128 digest = xxh3_128(bytes);
  Checksum out{};
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<unsigned char>(digest.high >> (56 - 8 * i));
    out[static_cast<std::size_t>(8 + i)] = static_cast<unsigned char>(digest.low >> (56 - 8 * i));
  }
  return out;
}

const char* name_of(ChecksumAlgorithm algorithm) {
  return algorithm == ChecksumAlgorithm::sha256 ? "sha256" : "xxh3-128";
}

std::string hex(const Sha256& digest) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : digest) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

}  // namespace jitcache::pack
