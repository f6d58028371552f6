// Test helper shared by the unit and integration tests of the tiers library check.
#pragma once

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace jitcache::testing {

// Where the segments the loader maps end in `elf` (an ELF64 file): cutting the file at half of that
// leaves pages the loader touches wholly past its end. (Half the file is not enough: the debug
// sections after the segments make most of its size.)
inline std::size_t mapped_end(const std::string& elf) {
  Elf64_Ehdr header;
  std::memcpy(&header, elf.data(), sizeof header);
  std::size_t end = 0;
  for (std::size_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, elf.data() + header.e_phoff + i * sizeof segment, sizeof segment);
    if (segment.p_type == PT_LOAD) end = std::max<std::size_t>(end, segment.p_offset + segment.p_filesz);
  }
  return end;
}

}  // namespace jitcache::testing
