// Portable part of the compiler identity: the ELF build-id reader (plain file I/O) and the memo.
// Module lookup and file times are in compiler_identity_posix.cpp / compiler_identity_win32.cpp.
#include "hashing/compiler_identity.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "hashing/compiler_identity_platform.hpp"
#include "hashing/elf_reader.hpp"

namespace jitcache {
namespace {

using elf::BoundedFile;
using elf::ElfBytes;
using elf::ElfFormat;
using elf::HeaderTable;
using elf::kMaxHeaderTableBytes;
using elf::parse_ident;
using elf::program_header_table;
using elf::section_header_table;

// ---- ELF build-id reader (hashing/elf_reader.hpp distrusts every offset and size). ----------

constexpr std::uint32_t kPtNote = 4;
constexpr std::uint32_t kShtNote = 7;
constexpr std::uint32_t kNtGnuBuildId = 3;
// Build-id notes are tiny; anything bigger is not worth reading (and may be hostile).
constexpr std::uint64_t kMaxNoteRegionBytes = 1 << 20;

struct NoteRegion {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t align = 4;
};

// PT_NOTE segments: always present in a loadable object, even when sections were stripped.
std::optional<NoteRegion> note_from_program_header(const ElfBytes& entry, const ElfFormat& format) {
  if (entry.uint(0, 4) != kPtNote) return std::nullopt;
  if (format.is64) return NoteRegion{entry.uint(8, 8), entry.uint(32, 8), entry.uint(48, 8)};
  return NoteRegion{entry.uint(4, 4), entry.uint(16, 4), entry.uint(28, 4)};
}

std::optional<NoteRegion> note_from_section_header(const ElfBytes& entry, const ElfFormat& format) {
  if (entry.uint(4, 4) != kShtNote) return std::nullopt;
  if (format.is64) return NoteRegion{entry.uint(24, 8), entry.uint(32, 8), entry.uint(48, 8)};
  return NoteRegion{entry.uint(16, 4), entry.uint(20, 4), entry.uint(32, 4)};
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : bytes) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0xf]);
  }
  return out;
}

std::uint64_t align_up(std::uint64_t value, std::uint64_t align) { return (value + align - 1) / align * align; }

// Walks the notes of one region (namesz, descsz, type, name, desc; padded to 4 or 8).
std::string build_id_in_notes(std::string_view notes, const ElfFormat& format, std::uint64_t region_align) {
  const ElfBytes bytes(notes, format.little_endian);
  const std::uint64_t align = region_align == 8 ? 8 : 4;
  std::uint64_t position = 0;
  while (position + 12 <= notes.size()) {
    const std::uint64_t name_size = bytes.uint(position, 4);
    const std::uint64_t desc_size = bytes.uint(position + 4, 4);
    const std::uint64_t type = bytes.uint(position + 8, 4);
    const std::uint64_t name_at = position + 12;
    const std::uint64_t desc_at = name_at + align_up(name_size, align);
    const std::uint64_t end = desc_at + align_up(desc_size, align);
    if (desc_at > notes.size() || desc_size > notes.size() - desc_at) return {};
    const std::string_view name = notes.substr(name_at, name_size);
    if (type == kNtGnuBuildId && name == std::string_view("GNU\0", 4) && desc_size > 0) {
      return to_hex(notes.substr(desc_at, desc_size));
    }
    position = end;
  }
  return {};
}

// Build-ids that the loader-facing functions read from mapped images, by real path. Never
// destroyed: the app's threads may still build programs while statics are torn down.
std::mutex& mapped_ids_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
std::map<std::string, std::string>& mapped_ids() {
  static auto* ids = new std::map<std::string, std::string>;
  return *ids;
}

std::string mapped_build_id(const std::string& path) {
  std::lock_guard lock(mapped_ids_mutex());
  auto found = mapped_ids().find(path);
  return found == mapped_ids().end() ? std::string() : found->second;
}

template <typename NoteOf>
std::string build_id_in_table(BoundedFile& file, const ElfFormat& format, const HeaderTable& table,
                              std::uint64_t min_entry_size, NoteOf note_of) {
  if (table.count == 0 || table.entry_size < min_entry_size) return {};
  if (table.count * table.entry_size > kMaxHeaderTableBytes) return {};
  const auto entries = file.read(table.offset, table.count * table.entry_size);
  if (!entries) return {};
  for (std::uint64_t i = 0; i < table.count; ++i) {
    const std::string_view entry = std::string_view(*entries).substr(i * table.entry_size, table.entry_size);
    const std::optional<NoteRegion> region = note_of(ElfBytes(entry, format.little_endian), format);
    if (!region || region->size > kMaxNoteRegionBytes) continue;
    const auto notes = file.read(region->offset, region->size);
    if (!notes) continue;
    std::string build_id = build_id_in_notes(*notes, format, region->align);
    if (!build_id.empty()) return build_id;
  }
  return {};
}

}  // namespace

std::string read_build_id(const std::string& path) {
  BoundedFile file(path);
  const std::string header_bytes = file.read(0, std::min<std::uint64_t>(file.size(), 64)).value_or("");
  const std::optional<ElfFormat> format = parse_ident(header_bytes);
  if (!format || header_bytes.size() < (format->is64 ? 64u : 52u)) return {};
  const ElfBytes header(header_bytes, format->little_endian);
  const std::uint64_t program_entry = format->is64 ? 56 : 32;
  const std::uint64_t section_entry = format->is64 ? 64 : 40;
  std::string build_id = build_id_in_table(file, *format, program_header_table(header, *format),
                                           program_entry, note_from_program_header);
  if (build_id.empty()) {
    build_id = build_id_in_table(file, *format, section_header_table(header, *format), section_entry,
                                 note_from_section_header);
  }
  return build_id;
}

std::string build_id_in_native_notes(std::string_view notes, std::uint64_t align) {
  return build_id_in_notes(notes, ElfFormat{sizeof(void*) == 8, std::endian::native == std::endian::little}, align);
}

void note_mapped_build_id(const std::string& path, std::string build_id) {
  if (build_id.empty()) return;
  std::lock_guard lock(mapped_ids_mutex());
  mapped_ids().emplace(path, std::move(build_id));  // the first image seen under a path stays
}

// Memoized for the life of the process: the mapped library cannot change under us, and
// reading build-ids of large libraries (libLLVM is 100+ MB) on every build would be wasteful.
// A file that cannot be stat'ed is not remembered, so it is looked at again next time.
// Never destroyed: the app's threads may still build programs while statics are torn down.
LibraryIdentity identify_library(const std::string& path) {
  static auto* mutex = new std::mutex;
  static auto* known = new std::map<std::string, LibraryIdentity>;
  {
    std::lock_guard lock(*mutex);
    if (auto found = known->find(path); found != known->end()) return found->second;
  }
  LibraryIdentity identity;
  identity.path = path;
  // The mapped image's build-id when the loader-facing functions saw it: no file to read, and it
  // names the code that runs even when the file was replaced since it was loaded.
  identity.build_id = mapped_build_id(path);
  if (identity.build_id.empty()) identity.build_id = read_build_id(path);  // outside the lock
  if (!read_size_and_mtime(identity)) return identity;
  std::lock_guard lock(*mutex);
  return known->emplace(path, std::move(identity)).first->second;
}

}  // namespace jitcache
