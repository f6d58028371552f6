// What the store tests write and damage on disk by hand: entries as store format 1 wrote them (an
// older jitcache's store, which format 2 still serves), and the bytes of a format 2 entry file.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/local/entry_check.hpp"
#include "store/local/entry_file.hpp"

namespace jitcache::store_test {

namespace fs = std::filesystem;

inline fs::path entry_name(const fs::path& root, const Digest128& key, std::string_view extension) {
  const std::string hex = key.hex();
  return root / hex.substr(0, 2) / hex.substr(2, 2) / (hex + std::string(extension));
}

inline void write_private(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ::chmod(path.c_str(), 0600);
}

// As format 1 committed an entry: <key>.bin, then the sidecar <key>.json naming the binary's size
// and XXH3-64 and the key. The size record is removed, as if the writer was an older jitcache that
// counted the entry in it: the next store operation counts again.
inline void write_format1_entry(const fs::path& root, const Digest128& key, std::string_view binary,
                                nlohmann::json sidecar = nullptr) {
  const fs::path binary_path = entry_name(root, key, ".bin");
  for (const fs::path& dir : {binary_path.parent_path().parent_path(), binary_path.parent_path()}) {
    fs::create_directories(dir);
    ::chmod(dir.c_str(), 0700);
  }
  if (sidecar.is_null()) sidecar = nlohmann::json::object();
  store_detail::add_integrity_fields(&sidecar, key.hex(), binary);
  write_private(binary_path, binary);
  write_private(entry_name(root, key, ".json"), store_detail::sidecar_text(sidecar));
  std::error_code ignored;
  fs::remove(root / "size", ignored);
}

inline std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Where the binary starts in a format 2 entry file (after the header and the sidecar).
inline std::size_t binary_offset(const fs::path& entry_file) {
  const std::string bytes = read_bytes(entry_file);
  std::string why;
  const auto header = store_detail::decode_entry_header(bytes, bytes.size(), &why);
  return header ? store_detail::kEntryHeaderBytes + static_cast<std::size_t>(header->sidecar_bytes) : 0;
}

// Flips one bit at `offset` of a file in place (its checksums no longer match).
inline void flip_byte(const fs::path& path, std::size_t offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(offset));
  const char byte = static_cast<char>(file.get());
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(static_cast<char>(byte ^ 1));
}

}  // namespace jitcache::store_test
