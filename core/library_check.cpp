#include "core/library_check.hpp"

#include <elf.h>
#include <link.h>

#include <cstring>

#include "store/files/trusted_file.hpp"

namespace jitcache {
namespace {

constexpr unsigned char kClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kByteOrder = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
constexpr std::size_t kMaxSegments = 256;

bool within(std::uint64_t offset, std::uint64_t size, std::uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

// What the loader reads and maps of the file before any of its code runs.
std::string elf_problem(const fileops::File& file, std::uint64_t file_size) {
  std::string bytes;
  if (file.read_at(0, sizeof(ElfW(Ehdr)), &bytes)) return "unreadable";
  if (bytes.compare(0, SELFMAG, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (bytes.size() != sizeof(ElfW(Ehdr))) return "truncated: shorter than an ELF header (" + std::to_string(file_size) + " bytes)";
  ElfW(Ehdr) header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (header.e_ident[EI_CLASS] != kClass || header.e_ident[EI_DATA] != kByteOrder) {
    return "an ELF file for another kind of machine";
  }
  if (header.e_type != ET_DYN) return "not a shared object";
  if (header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phnum == 0 || header.e_phnum > kMaxSegments) {
    return "its program headers are malformed";
  }
  const std::uint64_t table = std::uint64_t{header.e_phnum} * sizeof(ElfW(Phdr));
  if (!within(header.e_phoff, table, file_size) || file.read_at(header.e_phoff, table, &bytes) ||
      bytes.size() != table) {
    return "truncated: its program headers end past its " + std::to_string(file_size) + " bytes";
  }
  for (std::size_t i = 0; i < header.e_phnum; ++i) {
    ElfW(Phdr) segment;
    std::memcpy(&segment, bytes.data() + i * sizeof segment, sizeof segment);
    if (!within(segment.p_offset, segment.p_filesz, file_size)) {
      return "truncated: segment " + std::to_string(i) + " ends at byte " +
             std::to_string(segment.p_offset + segment.p_filesz) + ", past its end (" + std::to_string(file_size) +
             " bytes)";
    }
  }
  return {};
}

}  // namespace

std::optional<std::filesystem::path> check_loadable_library(const std::filesystem::path& path, std::string* why) {
  fileops::File file;
  std::optional<std::filesystem::path> resolved = resolve_trusted_file(path, why, &file);
  if (!resolved) return std::nullopt;
  fileops::FileInfo info;
  if (auto error = file.info(&info)) {
    *why = path.string() + ": " + error.message();
    return std::nullopt;
  }
  if (std::string problem = elf_problem(file, info.size); !problem.empty()) {
    *why = path.string() + " is " + problem;
    return std::nullopt;
  }
  return resolved;
}

}  // namespace jitcache
