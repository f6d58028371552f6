// Prints every answer the OpenCL headers define for a built program, its build on each device, its
// kernels, their arguments and their work-group and sub-group info, one "name: answer" line each,
// in a form that is the same from run to run when the answers are (handles become names, binaries
// digests). Each query is asked twice, for the size and for the value, as apps do.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <string>
#include <vector>

namespace query_parity {

struct DumpScope {
  cl_context context = nullptr;       // printed as "app context" when a query returns it
  std::vector<cl_device_id> devices;  // printed as "device N"
};

// Program and per-device build queries only (a compiled object has no kernels).
void dump_program_queries(const std::string& label, cl_program program, const DumpScope& scope);
// Everything: the program, then each kernel the program names (created by name, then released).
void dump_program(const std::string& label, cl_program program, const DumpScope& scope);

}  // namespace query_parity
