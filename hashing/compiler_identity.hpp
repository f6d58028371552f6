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

// The DT_NEEDED names of the ELF shared object at `path`, read from the file (elf_needed.cpp);
// empty when it is not ELF or has none.
std::vector<std::string> read_needed_libraries(const std::string& path);

// The loaded compiler libraries that serve the drivers in `driver_libraries` (their vendor
// libraries): those in a driver's dependency closure (DT_NEEDED, resolved among the loaded
// objects as the loader resolved them) and those whose own closure reaches a driver (plugins it
// loaded, e.g. PoCL's libpocl-devices-*). Not those another driver brought into the process: an
// unrelated driver's install must not change this one's keys. With no driver library known,
// every loaded compiler library (the key then changes more often, never too little). On
// Windows, every loaded compiler library.
std::vector<std::string> compiler_libraries_of(const std::vector<std::string>& driver_libraries);

}  // namespace jitcache
