// A clCompileProgram the cache let us skip runs here, the moment the driver needs the object:
// a link that misses, or a query answered by the compiled program (status, log, binaries).
#pragma once

#include <memory>

#include "shim/opencl/program_registry.hpp"

namespace jitcache::opencl {

// Runs the program's deferred compile, if any; returns the driver's status (CL_SUCCESS if none).
cl_int run_deferred_compile(cl_program program);
// Forgets the program's deferred compile without running it (re-compiled, or released).
void drop_deferred_compile(cl_program program);
void release_deferred_compile(std::shared_ptr<DeferredCompile> deferred);

}  // namespace jitcache::opencl
