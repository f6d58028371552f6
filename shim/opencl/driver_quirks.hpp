// The OpenCL drivers' known quirks that jitcache works around, in one named table
// (kDriverQuirks). Each is documented in docs/reliability.md ("Driver quirks") and covered by a
// real-driver test (tests/integration/opencl_quirks_test.cpp). The adapter asks here before it
// makes a driver call the app did not make itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

struct DriverQuirk {
  std::string_view name;    // as it appears in traces and docs
  std::string_view driver;  // which driver and versions
  std::string_view effect;  // what jitcache does about it
};

// PoCL with its kernel cache off (POCL_KERNEL_CACHE=0) names the program's scratch folder
// ($POCL_CACHE_DIR/_UNCACHED_xxxxxx) in the binary's header and deletes that folder when the
// program is released: every program loaded from one binary shares it, so the first release
// pulls it from under the others (abort: "Can't get stat() on .../_UNCACHED_xxxxxx/...").
inline constexpr DriverQuirk kPoclSharedScratchFolder{
    "pocl-shared-scratch-folder", "PoCL (binary formats 6, 7 and 9; 3.1 tested) with POCL_KERNEL_CACHE=0",
    "each cached binary is loaded into a scratch folder of its own: the header field is rewritten to "
    "a fresh mkdtemp folder beside PoCL's own before clCreateProgramWithBinary"};

// PoCL links each kernel's work-group function into "<kernel name>.so" when CL_PROGRAM_BINARIES is
// read; a name the file system cannot hold (over NAME_MAX - 3 bytes) aborts the process ("Final
// linking of kernel ... failed"), kernel cache on or off.
inline constexpr DriverQuirk kPoclLongKernelName{
    "pocl-long-kernel-name", "PoCL (all versions seen, 3.1 tested)",
    "a program with a kernel name of more than 252 bytes is not read back: the build passes "
    "through uncached, with the reason in the trace"};

// NVIDIA's driver corrupts its heap building a program with a kernel name of 300 characters or
// more (256 is fine): the process aborts later, at some free() ("free(): invalid next size"), or
// at a query on the program (CL_PROGRAM_KERNEL_NAMES, clCreateKernelsInProgram). Whether the app
// survives depends on what allocates after the build, so jitcache adds nothing to such a build.
inline constexpr DriverQuirk kNvidiaLongKernelName{
    "nvidia-long-kernel-name", "NVIDIA (580.159.04 tested, H200)",
    "a program whose source holds an identifier of more than 255 characters passes through "
    "untouched (no lookup of the driver, no capture; uncacheable with the reason in the trace)"};

// PoCL with its kernel cache on (its default) keeps every program it builds: building a program again
// costs about a load, far less than waiting for a capture helper that is still building it (that
// build also generates every kernel's code for the binary it stores).
inline constexpr DriverQuirk kPoclOwnCacheRebuildsCheaply{
    "pocl-own-cache-rebuilds-cheaply", "PoCL with its kernel cache on (the default; 3.1 tested)",
    "a build whose capture is still in flight (its helper has not stored it) is not waited for: the "
    "app builds it again through PoCL's own cache, and the helper stores it"};

// Mesa's rusticl (22.3, llvmpipe): a program built from a binary answers CL_PROGRAM_BUILD_OPTIONS
// "" whatever options its clBuildProgram had. A hit's shadow is such a program.
inline constexpr DriverQuirk kRusticlBinaryBuildOptions{
    "rusticl-binary-build-options", "Mesa rusticl (22.3 tested)",
    "not worked around yet: a hit answers CL_PROGRAM_BUILD_OPTIONS as the driver does for the shadow (\"\"); "
    "the query-parity test asserts exactly this difference"};

// rusticl lists the kernels of a program loaded from a binary (CL_PROGRAM_KERNEL_NAMES,
// clCreateKernelsInProgram) in an order of its own, new in every process (a hash map's).
inline constexpr DriverQuirk kRusticlKernelOrder{
    "rusticl-kernel-order", "Mesa rusticl (22.3 tested)",
    "not worked around yet: a hit lists the same kernels in the shadow's order; the query-parity "
    "test compares them as a set"};

inline constexpr DriverQuirk kDriverQuirks[] = {kPoclSharedScratchFolder, kPoclLongKernelName, kNvidiaLongKernelName,
                                               kPoclOwnCacheRebuildsCheaply, kRusticlBinaryBuildOptions,
                                               kRusticlKernelOrder};

// kPoclOwnCacheRebuildsCheaply: whether this device's driver rebuilds a program it built before
// more cheaply than a capture helper can finish storing it.
bool rebuilds_cheaply(cl_device_id device);

// kNvidiaLongKernelName: why a build of `source` for `devices` must be left to the driver alone,
// or empty. Decided from the text (any identifier over 255 characters), before any driver call.
std::string source_build_risk(const std::vector<cl_device_id>& devices, const std::string& source);

// clCreateProgramWithBinary for cached binaries (one per device), with the load quirks applied.
cl_program create_program_from_cache(cl_context context, const std::vector<cl_device_id>& devices,
                                     const std::vector<const std::string*>& binaries, cl_int* status);

// Why reading back the binaries of `program` (built for `devices`, with `kernel_names`) could
// take the app down, or empty when it is safe. Asked before CL_PROGRAM_BINARIES is read.
std::string binary_read_risk(const std::vector<cl_device_id>& devices, const std::vector<std::string>& kernel_names);

}  // namespace jitcache::opencl
