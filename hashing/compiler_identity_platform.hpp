// What compiler_identity.cpp needs from the OS; compiler_identity_posix.cpp and
// compiler_identity_win32.cpp implement it (with library_containing and
// loaded_compiler_libraries from compiler_identity.hpp).
#pragma once

#include "hashing/build_inputs.hpp"

namespace jitcache {

// Fills identity.size and identity.mtime_ns from the file at identity.path; false (and zeros)
// when the file cannot be read.
bool read_size_and_mtime(LibraryIdentity& identity);

}  // namespace jitcache
