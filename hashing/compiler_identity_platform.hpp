// What compiler_identity.cpp needs from the OS; compiler_identity_posix.cpp and
// compiler_identity_win32.cpp implement it (with library_containing and
// loaded_compiler_libraries from compiler_identity.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hashing/build_inputs.hpp"

namespace jitcache {

// Fills identity.size and identity.mtime_ns from the file at identity.path; false (and zeros)
// when the file cannot be read.
bool read_size_and_mtime(LibraryIdentity& identity);

// The GNU build-id among ELF notes in this process's own format and byte order (a mapped image's
// PT_NOTE segment); empty when there is none.
std::string build_id_in_native_notes(std::string_view notes, std::uint64_t align);

// Remembers the build-id read from the mapped image of the library at `path` (its real path):
// identify_library then takes it instead of reading the file.
void note_mapped_build_id(const std::string& path, std::string build_id);

}  // namespace jitcache
