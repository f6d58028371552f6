// The OpenCL hooks, with the API's own signatures. Every injection path (LD_PRELOAD exports, the
// ICD layer's dispatch table, the Windows import table) points at these same functions.
#pragma once

#include "shim/opencl/app_holds.hpp"
#include "shim/opencl/hooked_functions.hpp"
#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

// One hook per entry of shim/opencl/hooked_functions.hpp, with the API's own signature.
#define JITCACHE_DECLARE_HOOK(result, api_name, hook, parameters, arguments) result hook parameters;
JITCACHE_HOOKED_OPENCL_FUNCTIONS(JITCACHE_DECLARE_HOOK)
#undef JITCACHE_DECLARE_HOOK

// Every program the app gets (created, or linked by clLinkProgram): counted from now on
// (app_holds.hpp), and whatever jitcache had recorded at that handle dropped.
void program_made(cl_program program);
// After the app released a kernel (app_holds.hpp's account of it): the reference jitcache held for
// a kernel of a shadow is dropped, and what jitcache keeps for a program the app let go entirely.
void forget_program_of_released_kernel(const KernelRelease& release);

}  // namespace jitcache::opencl
