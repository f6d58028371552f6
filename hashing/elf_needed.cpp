// DT_NEEDED names of an ELF shared object, read from its file: PT_DYNAMIC's entries, their
// strings found through DT_STRTAB's address mapped back to a file offset by the PT_LOAD segments.
// Only the few bytes of each name are read (libLLVM's string table is megabytes).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hashing/compiler_identity.hpp"
#include "hashing/elf_reader.hpp"

namespace jitcache {
namespace {

constexpr std::uint64_t kPtLoad = 1, kPtDynamic = 2;
constexpr std::uint64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10;
constexpr std::uint64_t kMaxDynamicBytes = 1 << 20;
constexpr std::uint64_t kMaxNameBytes = 4096;  // PATH_MAX: a longer name is not a library's

struct Segment {
  std::uint64_t type = 0, offset = 0, vaddr = 0, file_size = 0;
};

Segment segment_of(const elf::ElfBytes& entry, const elf::ElfFormat& format) {
  if (format.is64) return {entry.uint(0, 4), entry.uint(8, 8), entry.uint(16, 8), entry.uint(32, 8)};
  return {entry.uint(0, 4), entry.uint(4, 4), entry.uint(8, 4), entry.uint(16, 4)};
}

}  // namespace

std::vector<std::string> read_needed_libraries(const std::string& path) {
  elf::BoundedFile file(path);
  const std::string header_bytes = file.read(0, std::min<std::uint64_t>(file.size(), 64)).value_or("");
  const std::optional<elf::ElfFormat> format = elf::parse_ident(header_bytes);
  if (!format || header_bytes.size() < (format->is64 ? 64u : 52u)) return {};
  const elf::ElfBytes header(header_bytes, format->little_endian);
  const elf::HeaderTable table = elf::program_header_table(header, *format);
  const std::uint64_t entry_size = format->is64 ? 56 : 32;
  if (table.count == 0 || table.entry_size < entry_size || table.count * table.entry_size > elf::kMaxHeaderTableBytes) {
    return {};
  }
  const auto entries = file.read(table.offset, table.count * table.entry_size);
  if (!entries) return {};
  std::vector<Segment> loads;
  std::optional<Segment> dynamic;
  for (std::uint64_t i = 0; i < table.count; ++i) {
    const Segment segment = segment_of(
        elf::ElfBytes(std::string_view(*entries).substr(i * table.entry_size, table.entry_size), format->little_endian),
        *format);
    if (segment.type == kPtLoad) loads.push_back(segment);
    if (segment.type == kPtDynamic) dynamic = segment;
  }
  if (!dynamic || dynamic->file_size > kMaxDynamicBytes) return {};
  const auto dynamic_bytes = file.read(dynamic->offset, dynamic->file_size);
  if (!dynamic_bytes) return {};

  const std::size_t word = format->word();
  const elf::ElfBytes entries_of_dynamic(*dynamic_bytes, format->little_endian);
  std::vector<std::uint64_t> needed;
  std::uint64_t strtab = 0, strsz = 0;
  for (std::size_t at = 0; at + 2 * word <= dynamic_bytes->size(); at += 2 * word) {
    const std::uint64_t tag = entries_of_dynamic.uint(at, word), value = entries_of_dynamic.uint(at + word, word);
    if (tag == kDtNull) break;
    if (tag == kDtNeeded) needed.push_back(value);
    if (tag == kDtStrtab) strtab = value;
    if (tag == kDtStrsz) strsz = value;
  }
  // The string table's address, as a file offset: inside the file part of a PT_LOAD segment.
  std::optional<std::uint64_t> strtab_offset;
  for (const Segment& load : loads) {
    if (strtab >= load.vaddr && strtab - load.vaddr < load.file_size && strsz <= load.file_size - (strtab - load.vaddr)) {
      strtab_offset = load.offset + (strtab - load.vaddr);
    }
  }
  if (!strtab_offset) return {};
  std::vector<std::string> names;
  for (std::uint64_t at : needed) {
    if (at >= strsz) continue;
    const auto bytes = file.read(*strtab_offset + at, std::min(strsz - at, kMaxNameBytes));
    if (!bytes) continue;
    const std::size_t end = bytes->find('\0');
    if (end != std::string::npos && end > 0) names.push_back(bytes->substr(0, end));
  }
  return names;
}

}  // namespace jitcache
