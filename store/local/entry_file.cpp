#include "store/local/entry_file.hpp"

#include <cstring>

namespace jitcache::store_detail {
namespace {

void put_u64(std::string* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::uint64_t get_u64(std::string_view bytes, std::size_t at) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
  return value;
}

constexpr std::size_t kChecksummedBytes = kEntryHeaderBytes - 8;

}  // namespace

std::string encode_entry(const Digest128& key, std::string_view sidecar, std::string_view binary) {
  std::string out;
  out.reserve(kEntryHeaderBytes + sidecar.size() + binary.size());
  out += kEntryMagic;
  put_u64(&out, sidecar.size());
  put_u64(&out, binary.size());
  put_u64(&out, key.high);
  put_u64(&out, key.low);
  put_u64(&out, xxh3_64(sidecar));
  put_u64(&out, xxh3_64(binary));
  put_u64(&out, xxh3_64(std::string_view(out).substr(0, kChecksummedBytes)));
  out += sidecar;
  out += binary;
  return out;
}

std::optional<EntryHeader> decode_entry_header(std::string_view bytes, std::uint64_t file_size, std::string* why) {
  if (bytes.size() < kEntryHeaderBytes || file_size < kEntryHeaderBytes) {
    *why = "entry file is shorter than its header";
    return std::nullopt;
  }
  if (bytes.substr(0, kEntryMagic.size()) != kEntryMagic) {
    *why = "entry file does not start with " + std::string(kEntryMagic);
    return std::nullopt;
  }
  if (get_u64(bytes, kChecksummedBytes) != xxh3_64(bytes.substr(0, kChecksummedBytes))) {
    *why = "entry header checksum mismatch";
    return std::nullopt;
  }
  EntryHeader header;
  header.sidecar_bytes = get_u64(bytes, 8);
  header.binary_bytes = get_u64(bytes, 16);
  header.key.high = get_u64(bytes, 24);
  header.key.low = get_u64(bytes, 32);
  header.sidecar_xxh3 = get_u64(bytes, 40);
  header.binary_xxh3 = get_u64(bytes, 48);
  const std::uint64_t body = file_size - kEntryHeaderBytes;
  if (header.sidecar_bytes > body || header.binary_bytes != body - header.sidecar_bytes) {
    *why = "entry file is " + std::to_string(file_size) + " bytes, its header says " +
           std::to_string(header.sidecar_bytes) + " + " + std::to_string(header.binary_bytes) + " after the header";
    return std::nullopt;
  }
  return header;
}

std::optional<std::string> split_entry(std::string* file, const Digest128& key, EntryHeader* decoded,
                                       std::string* why) {
  const std::optional<EntryHeader> header = decode_entry_header(*file, file->size(), why);
  if (!header) return std::nullopt;
  *decoded = *header;
  if (header->key != key) {
    *why = "entry file belongs to key " + header->key.hex() + ": copied or linked under another key's name";
    return std::nullopt;
  }
  const std::string_view whole(*file);
  const std::string_view sidecar = whole.substr(kEntryHeaderBytes, header->sidecar_bytes);
  const std::string_view binary = whole.substr(kEntryHeaderBytes + header->sidecar_bytes);
  if (xxh3_64(sidecar) != header->sidecar_xxh3) {
    *why = "sidecar checksum mismatch";
    return std::nullopt;
  }
  if (const std::uint64_t actual = xxh3_64(binary); actual != header->binary_xxh3) {
    *why = "binary checksum " + hex64(actual) + " != recorded " + hex64(header->binary_xxh3);
    return std::nullopt;
  }
  std::string sidecar_text(sidecar);
  file->erase(0, kEntryHeaderBytes + header->sidecar_bytes);
  return sidecar_text;
}

}  // namespace jitcache::store_detail
