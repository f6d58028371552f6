// Identity of the libraries that compile for a device: found from a function pointer or by name
// among the loaded objects, identified by GNU build-id (else size + mtime). On Linux the build-id
// of a loaded library is read from its mapped image. Results are memoized per path.
#pragma once

#include <string>
#include <vector>

#include "hashing/build_inputs.hpp"

namespace jitcache {

// Path of the shared object containing `address`, or empty.
std::string library_containing(const void* address);

// Reads the ELF GNU build-id note from the file (no dlopen). Empty when absent or not ELF.
std::string read_build_id(const std::string& path);

// build-id, size and mtime of the library at `path`; memoized (thread-safe). The build-id is the
// mapped image's when library_containing or loaded_compiler_libraries saw it, else the file's.
LibraryIdentity identify_library(const std::string& path);

// Loaded libraries (dl_iterate_phdr) whose file name marks them as a compiler backend:
// libLLVM*, libclang*, libigc*, libigdfcl*, libnvidia-ptxjitcompiler*, libnvidia-compiler*, ...
std::vector<std::string> loaded_compiler_libraries();

}  // namespace jitcache
