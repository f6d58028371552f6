// What the fuzz targets share: a scratch folder for targets whose parser reads a file.
#pragma once

#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace jitcache::fuzz {

// One folder per fuzzing process, removed at exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    char pattern[] = "/tmp/jitcache-fuzz-XXXXXX";
    std::filesystem::path made = ::mkdtemp(pattern) ? pattern : "/tmp";
    static std::filesystem::path to_remove = made;
    std::atexit([] {
      std::error_code ignored;
      if (to_remove != "/tmp") std::filesystem::remove_all(to_remove, ignored);
    });
    return made;
  }();
  return dir;
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace jitcache::fuzz
