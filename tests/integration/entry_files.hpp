// Reading and rewriting the store's entry files (store format 2, store/local/entry_file.hpp) in tests
// that look inside the cache or change an entry behind the store's back.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "store/local/entry_file.hpp"

namespace jitcache::testing {

struct StoredEntry {
  std::string sidecar_text;
  nlohmann::json sidecar;  // discarded when the text is not JSON
  std::string binary;
};

inline std::string read_entry_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// An entry file's sidecar and binary (empty when the file is not one).
inline StoredEntry read_entry(const std::filesystem::path& file) {
  const std::string bytes = read_entry_bytes(file);
  std::string why;
  const auto header = store_detail::decode_entry_header(bytes, bytes.size(), &why);
  StoredEntry entry;
  if (!header) return entry;
  entry.sidecar_text = bytes.substr(store_detail::kEntryHeaderBytes, header->sidecar_bytes);
  entry.binary = bytes.substr(store_detail::kEntryHeaderBytes + header->sidecar_bytes);
  entry.sidecar = nlohmann::json::parse(entry.sidecar_text, nullptr, false);
  return entry;
}

// Writes the entry file anew, with checksums that agree: only what reads the parts can object.
inline void rewrite_entry(const std::filesystem::path& file, std::string_view sidecar_text, std::string_view binary) {
  const auto key = Digest128::from_hex(file.stem().string());
  const std::string bytes = store_detail::encode_entry(key ? *key : Digest128{}, sidecar_text, binary);
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace jitcache::testing
