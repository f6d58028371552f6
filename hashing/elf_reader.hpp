// Bounded reading of ELF files from disk: every offset and size read from the file is distrusted.
// Shared by the build-id reader (compiler_identity.cpp) and the DT_NEEDED reader (elf_needed.cpp).
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace jitcache::elf {

// Header tables bigger than this are not read (a real one is a few KiB; a hostile one may lie).
inline constexpr std::uint64_t kMaxHeaderTableBytes = 4 << 20;

class BoundedFile {
 public:
  explicit BoundedFile(const std::string& path) : file_(path, std::ios::binary) {
    if (!file_) return;
    file_.seekg(0, std::ios::end);
    const std::streamoff end = file_.tellg();
    size_ = end > 0 ? static_cast<std::uint64_t>(end) : 0;
  }

  // The bytes [offset, offset + count), or nothing when that range is not inside the file.
  std::optional<std::string> read(std::uint64_t offset, std::uint64_t count) {
    if (count > size_ || offset > size_ - count) return std::nullopt;
    std::string bytes(count, '\0');
    file_.clear();
    file_.seekg(static_cast<std::streamoff>(offset));
    file_.read(bytes.data(), static_cast<std::streamsize>(count));
    if (!file_ || static_cast<std::uint64_t>(file_.gcount()) != count) return std::nullopt;
    return bytes;
  }

  std::uint64_t size() const { return size_; }

 private:
  std::ifstream file_;
  std::uint64_t size_ = 0;
};

// Fixed-width integer reads from a byte buffer in the file's byte order, range-checked.
class ElfBytes {
 public:
  ElfBytes(std::string_view bytes, bool little_endian) : bytes_(bytes), little_(little_endian) {}

  std::uint64_t uint(std::size_t offset, std::size_t width) const {
    if (offset > bytes_.size() || width > bytes_.size() - offset) return 0;
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const auto byte = static_cast<unsigned char>(bytes_[offset + (little_ ? width - 1 - i : i)]);
      value = (value << 8) | byte;
    }
    return value;
  }

 private:
  std::string_view bytes_;
  bool little_;
};

struct ElfFormat {
  bool is64 = false;
  bool little_endian = true;
  std::size_t word() const { return is64 ? 8 : 4; }  // width of addresses, offsets and sizes
};

// A table of program or section headers: where it is and how big its entries are.
struct HeaderTable {
  std::uint64_t offset = 0;
  std::uint64_t entry_size = 0;
  std::uint64_t count = 0;
};

inline std::optional<ElfFormat> parse_ident(std::string_view header) {
  if (header.size() < 16 || header.substr(0, 4) != "\x7f" "ELF") return std::nullopt;
  const char elf_class = header[4], data = header[5];
  if ((elf_class != 1 && elf_class != 2) || (data != 1 && data != 2)) return std::nullopt;
  return ElfFormat{elf_class == 2, data == 1};
}

inline HeaderTable program_header_table(const ElfBytes& header, const ElfFormat& format) {
  return format.is64 ? HeaderTable{header.uint(0x20, 8), header.uint(0x36, 2), header.uint(0x38, 2)}
                     : HeaderTable{header.uint(0x1c, 4), header.uint(0x2a, 2), header.uint(0x2c, 2)};
}

inline HeaderTable section_header_table(const ElfBytes& header, const ElfFormat& format) {
  return format.is64 ? HeaderTable{header.uint(0x28, 8), header.uint(0x3a, 2), header.uint(0x3c, 2)}
                     : HeaderTable{header.uint(0x20, 4), header.uint(0x2e, 2), header.uint(0x30, 2)};
}

}  // namespace jitcache::elf
