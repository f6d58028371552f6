// What the app holds: its own references to the contexts, programs and kernels it made, counted from
// its own calls (create, retain, release) and never read from the driver. CL_*_REFERENCE_COUNT is
// stale by nature (the spec says so) and counts the driver's holds too: PoCL keeps a kernel for each
// command still queued, so a count of 1 never comes for a kernel the app released before its
// queue ran, and a record kept by that count outlived the handle.
// An object leaves when the app's count reaches zero, whatever the driver still holds; a create
// call at a handle starts it afresh (the driver may hand a freed handle out again).
#pragma once

#include <cstddef>

#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

// What a release left of the app's hold on an object.
enum class Hold {
  unknown,  // not made through a hooked call (or released more often than made)
  kept,     // the app still holds it
  gone,     // the app holds it no more: what jitcache keeps for it goes now
};

struct KernelRelease {
  Hold kernel = Hold::unknown;
  cl_program program = nullptr;  // the app's program the kernel was made from (when known)
  bool from_shadow = false;      // made from the shadow serving `program`: jitcache retained `program`
  Hold program_hold = Hold::unknown;  // the program's, when the kernel went: gone = no reference, no kernel
};

// A program is held while the app has a reference to it or a kernel made from it (the kernel
// keeps it alive and hands it out: CL_KERNEL_PROGRAM).
void program_created(cl_program program);
void program_retained(cl_program program);
Hold program_released(cl_program program);
// The app's kernels of `program` alive now; those made from its shadow alone.
std::size_t kernels_of(cl_program program);
std::size_t shadow_kernels_of(cl_program program);

void kernel_created(cl_kernel kernel, cl_program program, bool from_shadow);
void kernel_retained(cl_kernel kernel);
KernelRelease kernel_released(cl_kernel kernel);
// The app's program a kernel was made from (nullptr: not one of the app's kernels), and whether
// it was made from that program's shadow.
cl_program program_of_kernel(cl_kernel kernel, bool* from_shadow = nullptr);

void context_created(cl_context context);
void context_retained(cl_context context);
// Whether the app's next clReleaseContext of `context` is its last (asked before the driver's).
bool last_context_reference(cl_context context);
void context_released(cl_context context);
// Whether the app still holds `context`; false for one not made through a hooked call (jitcache
// keeps no driver object in a context whose release it cannot see).
bool app_holds_context(cl_context context);

}  // namespace jitcache::opencl
