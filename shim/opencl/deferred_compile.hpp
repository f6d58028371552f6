// A clCompileProgram the cache let us skip runs here, the moment the driver needs the object:
// a link that misses, or a query on the object that the cache's record cannot answer.
#pragma once

#include <memory>

#include "shim/opencl/program_registry.hpp"

namespace jitcache::opencl {

// Runs the program's deferred compile, if any; returns the driver's status (CL_SUCCESS if none).
cl_int run_deferred_compile(cl_program program);
// Forgets the program's deferred compile without running it (re-compiled, or released).
void drop_deferred_compile(cl_program program);
void release_deferred_compile(std::shared_ptr<DeferredCompile> deferred);

// Answer a query on a program whose compile is deferred from the cache's record (build status,
// options, log, binary type; binary sizes, binaries): true with `status` set when answered, false
// when the caller must run the compile and ask the driver (deferred_answers.cpp).
bool answer_deferred_build_info(cl_program program, cl_device_id device, cl_program_build_info param_name,
                                size_t param_value_size, void* param_value, size_t* param_value_size_ret,
                                cl_int& status);
bool answer_deferred_program_info(cl_program program, cl_program_info param_name, size_t param_value_size,
                                  void* param_value, size_t* param_value_size_ret, cl_int& status);

}  // namespace jitcache::opencl
