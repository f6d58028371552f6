// An OpenCL ICD layer (OPENCL_LAYERS) that writes the calls it sees to the file named by
// JITCACHE_TEST_CALL_LOG, one line each, so that tests count what an app or jitcache asked of the
// driver without trusting jitcache's own counters:
//   create <kind>            a program made (kind: source, il, binary, builtin, linked)
//   build <kind>             clBuildProgram of a program of that kind (unknown: not made in sight)
//   compile <kind>           clCompileProgram
//   link                     clLinkProgram
//   program-info <hex>       clGetProgramInfo's param_name
// Placed above jitcache (nearer the app) it sees the app's calls; below it, jitcache's too.
#include <CL/cl_layer.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

cl_icd_dispatch g_next;
cl_icd_dispatch g_layer;
std::mutex g_mutex;
std::unordered_map<cl_program, const char*> g_kinds;  // the latest program made at each handle

void log_line(const std::string& line) {
  const char* path = std::getenv("JITCACHE_TEST_CALL_LOG");
  if (!path) return;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());  // one write: lines of concurrent callers stay whole
  ::close(fd);
}

cl_program made(cl_program program, const char* kind) {
  if (!program) return program;
  {
    std::lock_guard lock(g_mutex);
    g_kinds[program] = kind;
  }
  log_line(std::string("create ") + kind);
  return program;
}

const char* kind_of(cl_program program) {
  std::lock_guard lock(g_mutex);
  auto it = g_kinds.find(program);
  return it == g_kinds.end() ? "unknown" : it->second;
}

cl_program CL_API_CALL create_with_source(cl_context context, cl_uint count, const char** strings,
                                          const size_t* lengths, cl_int* errcode_ret) {
  return made(g_next.clCreateProgramWithSource(context, count, strings, lengths, errcode_ret), "source");
}

cl_program CL_API_CALL create_with_il(cl_context context, const void* il, size_t length, cl_int* errcode_ret) {
  return made(g_next.clCreateProgramWithIL(context, il, length, errcode_ret), "il");
}

cl_program CL_API_CALL create_with_binary(cl_context context, cl_uint num_devices, const cl_device_id* devices,
                                          const size_t* lengths, const unsigned char** binaries, cl_int* binary_status,
                                          cl_int* errcode_ret) {
  return made(g_next.clCreateProgramWithBinary(context, num_devices, devices, lengths, binaries, binary_status,
                                               errcode_ret),
              "binary");
}

cl_program CL_API_CALL create_with_built_in_kernels(cl_context context, cl_uint num_devices,
                                                    const cl_device_id* devices, const char* names,
                                                    cl_int* errcode_ret) {
  return made(g_next.clCreateProgramWithBuiltInKernels(context, num_devices, devices, names, errcode_ret), "builtin");
}

cl_int CL_API_CALL build(cl_program program, cl_uint num_devices, const cl_device_id* devices, const char* options,
                         void(CL_CALLBACK* notify)(cl_program, void*), void* user_data) {
  log_line(std::string("build ") + kind_of(program));
  return g_next.clBuildProgram(program, num_devices, devices, options, notify, user_data);
}

cl_int CL_API_CALL compile(cl_program program, cl_uint num_devices, const cl_device_id* devices, const char* options,
                           cl_uint num_headers, const cl_program* headers, const char** header_names,
                           void(CL_CALLBACK* notify)(cl_program, void*), void* user_data) {
  log_line(std::string("compile ") + kind_of(program));
  return g_next.clCompileProgram(program, num_devices, devices, options, num_headers, headers, header_names, notify,
                                 user_data);
}

cl_program CL_API_CALL link(cl_context context, cl_uint num_devices, const cl_device_id* devices, const char* options,
                            cl_uint num_inputs, const cl_program* inputs,
                            void(CL_CALLBACK* notify)(cl_program, void*), void* user_data, cl_int* errcode_ret) {
  log_line("link");
  return made(g_next.clLinkProgram(context, num_devices, devices, options, num_inputs, inputs, notify, user_data,
                                   errcode_ret),
              "linked");
}

cl_int CL_API_CALL program_info(cl_program program, cl_program_info param, size_t size, void* value,
                                size_t* size_ret) {
  char line[64];
  std::snprintf(line, sizeof line, "program-info 0x%x", static_cast<unsigned>(param));
  log_line(line);
  return g_next.clGetProgramInfo(program, param, size, value, size_ret);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void* param_value,
                                               size_t* param_value_size_ret) {
  static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  static const char name[] = "jitcache test call log";
  const void* value = param_name == CL_LAYER_API_VERSION ? static_cast<const void*>(&version)
                      : param_name == CL_LAYER_NAME      ? static_cast<const void*>(name)
                                                         : nullptr;
  if (!value) return CL_INVALID_VALUE;
  const size_t size = param_name == CL_LAYER_API_VERSION ? sizeof version : sizeof name;
  if (param_value) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, value, size);
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch,
                                            cl_uint* num_entries_ret, const cl_icd_dispatch** layer_dispatch_ret) {
  const cl_uint ours = sizeof(cl_icd_dispatch) / sizeof(void*);
  if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret) return CL_INVALID_VALUE;
  const cl_uint known = num_entries < ours ? num_entries : ours;  // entries past the loader's stay null
  std::memset(&g_next, 0, sizeof g_next);
  std::memcpy(&g_next, target_dispatch, sizeof(void*) * known);
  g_layer = g_next;
  g_layer.clCreateProgramWithSource = create_with_source;
  g_layer.clCreateProgramWithIL = create_with_il;
  g_layer.clCreateProgramWithBinary = create_with_binary;
  g_layer.clCreateProgramWithBuiltInKernels = create_with_built_in_kernels;
  g_layer.clBuildProgram = build;
  g_layer.clCompileProgram = compile;
  g_layer.clLinkProgram = link;
  g_layer.clGetProgramInfo = program_info;
  *num_entries_ret = known;
  *layer_dispatch_ret = &g_layer;
  return CL_SUCCESS;
}

}  // extern "C"
