#include "cl_query_dump.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>

namespace query_parity {
namespace {

using Query = std::function<cl_int(size_t, void*, size_t*)>;

// How to print the bytes a query returned.
enum class Shape { text, unsigned_values, context, program, devices, kernel_attributes };

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\\') out += "\\\\";
    else if (static_cast<unsigned char>(c) < 0x20) out += "\\x" + std::to_string(static_cast<unsigned char>(c));
    else out += c;
  }
  return out;
}

std::uint64_t fnv1a(const void* data, size_t size) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ static_cast<const unsigned char*>(data)[i]) * 0x100000001b3ull;
  return hash;
}

std::string device_name(cl_device_id device, const DumpScope& scope) {
  for (size_t i = 0; i < scope.devices.size(); ++i) {
    if (scope.devices[i] == device) return "device " + std::to_string(i);
  }
  return "unknown device";
}

// Unsigned values of the element width the size says (a size_t[3], a bitfield, a cl_uint).
std::string unsigned_values(const std::vector<unsigned char>& bytes, size_t width) {
  std::string out;
  for (size_t at = 0; at + width <= bytes.size(); at += width) {
    std::uint64_t value = 0;
    std::memcpy(&value, bytes.data() + at, width);  // little-endian host
    out += (at ? " " : "") + std::to_string(value);
  }
  return out;
}

std::string formatted(Shape shape, const std::vector<unsigned char>& bytes, size_t width, const DumpScope& scope,
                      cl_program self) {
  switch (shape) {
    case Shape::text: {
      std::string text(bytes.begin(), bytes.end());
      bool terminated = !text.empty() && text.back() == '\0';
      if (terminated) text.pop_back();
      return "\"" + escaped(text) + "\"" + (terminated ? "" : " (unterminated)");
    }
    case Shape::unsigned_values: return unsigned_values(bytes, width);
    case Shape::context: {
      cl_context context = nullptr;
      if (bytes.size() == sizeof context) std::memcpy(&context, bytes.data(), sizeof context);
      return context == scope.context ? "app context" : "another context";
    }
    case Shape::program: {
      cl_program program = nullptr;
      if (bytes.size() == sizeof program) std::memcpy(&program, bytes.data(), sizeof program);
      return program == self ? "this program" : "another program";
    }
    case Shape::devices: {
      std::string out;
      for (size_t at = 0; at + sizeof(cl_device_id) <= bytes.size(); at += sizeof(cl_device_id)) {
        cl_device_id device = nullptr;
        std::memcpy(&device, bytes.data() + at, sizeof device);
        out += (at ? ", " : "") + device_name(device, scope);
      }
      return out;
    }
    case Shape::kernel_attributes: break;
  }
  return "?";
}

// Asks for the size, then for the value; prints both status codes, the size and the value.
void print_query(const std::string& name, const Query& query, Shape shape, size_t width, const DumpScope& scope,
                 cl_program self = nullptr) {
  size_t size = 0;
  cl_int size_status = query(0, nullptr, &size);
  if (size_status != CL_SUCCESS) {
    std::printf("%s: error %d\n", name.c_str(), size_status);
    return;
  }
  std::vector<unsigned char> bytes(size);
  size_t size_again = 0;
  cl_int status = query(size, bytes.data(), &size_again);
  if (status != CL_SUCCESS) {
    std::printf("%s: size %zu, then error %d\n", name.c_str(), size, status);
    return;
  }
  std::printf("%s: size %zu%s = %s\n", name.c_str(), size, size_again == size ? "" : " (sizes differ)",
              formatted(shape, bytes, width, scope, self).c_str());
}

// The binaries, one per device: their sizes and digests of their bytes.
void print_binaries(cl_program program) {
  size_t sizes_bytes = 0;
  cl_int status = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, 0, nullptr, &sizes_bytes);
  std::vector<size_t> sizes(sizes_bytes / sizeof(size_t));
  if (status == CL_SUCCESS) status = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizes_bytes, sizes.data(), nullptr);
  if (status != CL_SUCCESS) {
    std::printf("CL_PROGRAM_BINARIES: sizes error %d\n", status);
    return;
  }
  std::vector<std::vector<unsigned char>> binaries(sizes.size());
  std::vector<unsigned char*> pointers(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    binaries[i].resize(sizes[i]);
    pointers[i] = binaries[i].data();
  }
  size_t size_ret = 0;
  status = clGetProgramInfo(program, CL_PROGRAM_BINARIES, pointers.size() * sizeof(unsigned char*), pointers.data(),
                            &size_ret);
  if (status != CL_SUCCESS) {
    std::printf("CL_PROGRAM_BINARIES: error %d\n", status);
    return;
  }
  for (size_t i = 0; i < binaries.size(); ++i) {
    std::printf("CL_PROGRAM_BINARIES[%zu]: %zu bytes, fnv1a %016" PRIx64 "\n", i, binaries[i].size(),
                fnv1a(binaries[i].data(), binaries[i].size()));
  }
}

struct Named {
  const char* name;
  cl_uint param;
  Shape shape;
  size_t width;
};

void dump_kernel(cl_kernel kernel, cl_program program, const DumpScope& scope) {
  const Named kernel_queries[] = {
      {"CL_KERNEL_FUNCTION_NAME", CL_KERNEL_FUNCTION_NAME, Shape::text, 1},
      {"CL_KERNEL_NUM_ARGS", CL_KERNEL_NUM_ARGS, Shape::unsigned_values, sizeof(cl_uint)},
      {"CL_KERNEL_REFERENCE_COUNT", CL_KERNEL_REFERENCE_COUNT, Shape::unsigned_values, sizeof(cl_uint)},
      {"CL_KERNEL_CONTEXT", CL_KERNEL_CONTEXT, Shape::context, 0},
      {"CL_KERNEL_PROGRAM", CL_KERNEL_PROGRAM, Shape::program, 0},
      {"CL_KERNEL_ATTRIBUTES", CL_KERNEL_ATTRIBUTES, Shape::text, 1},
  };
  for (const Named& q : kernel_queries) {
    print_query(std::string("  ") + q.name,
                [&](size_t size, void* value, size_t* ret) { return clGetKernelInfo(kernel, q.param, size, value, ret); },
                q.shape, q.width, scope, program);
  }
  cl_uint args = 0;
  clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
  const Named arg_queries[] = {
      {"CL_KERNEL_ARG_ADDRESS_QUALIFIER", CL_KERNEL_ARG_ADDRESS_QUALIFIER, Shape::unsigned_values,
       sizeof(cl_kernel_arg_address_qualifier)},
      {"CL_KERNEL_ARG_ACCESS_QUALIFIER", CL_KERNEL_ARG_ACCESS_QUALIFIER, Shape::unsigned_values,
       sizeof(cl_kernel_arg_access_qualifier)},
      {"CL_KERNEL_ARG_TYPE_NAME", CL_KERNEL_ARG_TYPE_NAME, Shape::text, 1},
      {"CL_KERNEL_ARG_TYPE_QUALIFIER", CL_KERNEL_ARG_TYPE_QUALIFIER, Shape::unsigned_values,
       sizeof(cl_kernel_arg_type_qualifier)},
      {"CL_KERNEL_ARG_NAME", CL_KERNEL_ARG_NAME, Shape::text, 1},
  };
  for (cl_uint arg = 0; arg <= args; ++arg) {  // one past the last: the driver's CL_INVALID_ARG_INDEX
    for (const Named& q : arg_queries) {
      print_query("  arg " + std::to_string(arg) + " " + q.name,
                  [&](size_t size, void* value, size_t* ret) {
                    return clGetKernelArgInfo(kernel, arg, q.param, size, value, ret);
                  },
                  q.shape, q.width, scope);
    }
  }
  const Named work_group_queries[] = {
      {"CL_KERNEL_WORK_GROUP_SIZE", CL_KERNEL_WORK_GROUP_SIZE, Shape::unsigned_values, sizeof(size_t)},
      {"CL_KERNEL_COMPILE_WORK_GROUP_SIZE", CL_KERNEL_COMPILE_WORK_GROUP_SIZE, Shape::unsigned_values, sizeof(size_t)},
      {"CL_KERNEL_LOCAL_MEM_SIZE", CL_KERNEL_LOCAL_MEM_SIZE, Shape::unsigned_values, sizeof(cl_ulong)},
      {"CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE", CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
       Shape::unsigned_values, sizeof(size_t)},
      {"CL_KERNEL_PRIVATE_MEM_SIZE", CL_KERNEL_PRIVATE_MEM_SIZE, Shape::unsigned_values, sizeof(cl_ulong)},
      {"CL_KERNEL_GLOBAL_WORK_SIZE", CL_KERNEL_GLOBAL_WORK_SIZE, Shape::unsigned_values, sizeof(size_t)},
  };
  const Named sub_group_queries[] = {
      {"CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE", CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, Shape::unsigned_values,
       sizeof(size_t)},
      {"CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE", CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, Shape::unsigned_values,
       sizeof(size_t)},
      {"CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT", CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, Shape::unsigned_values,
       sizeof(size_t)},
      {"CL_KERNEL_MAX_NUM_SUB_GROUPS", CL_KERNEL_MAX_NUM_SUB_GROUPS, Shape::unsigned_values, sizeof(size_t)},
      {"CL_KERNEL_COMPILE_NUM_SUB_GROUPS", CL_KERNEL_COMPILE_NUM_SUB_GROUPS, Shape::unsigned_values, sizeof(size_t)},
  };
  for (cl_device_id device : scope.devices) {
    std::string prefix = "  " + device_name(device, scope) + " ";
    for (const Named& q : work_group_queries) {
      print_query(prefix + q.name,
                  [&](size_t size, void* value, size_t* ret) {
                    return clGetKernelWorkGroupInfo(kernel, device, q.param, size, value, ret);
                  },
                  q.shape, q.width, scope);
    }
    const size_t local_size[1] = {8};
    const size_t sub_group_count = 1;
    for (const Named& q : sub_group_queries) {
      bool takes_count = q.param == CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT;
      bool takes_size = q.param == CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE || q.param == CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE;
      print_query(prefix + q.name,
                  [&](size_t size, void* value, size_t* ret) {
                    return clGetKernelSubGroupInfo(kernel, device, q.param,
                                                   takes_count ? sizeof sub_group_count : takes_size ? sizeof local_size : 0,
                                                   takes_count ? static_cast<const void*>(&sub_group_count)
                                                   : takes_size ? static_cast<const void*>(local_size)
                                                                : nullptr,
                                                   size, value, ret);
                  },
                  q.shape, q.width, scope);
    }
  }
}

}  // namespace

void dump_program_queries(const std::string& label, cl_program program, const DumpScope& scope) {
  std::printf("== %s\n", label.c_str());
  const Named program_queries[] = {
      {"CL_PROGRAM_REFERENCE_COUNT", CL_PROGRAM_REFERENCE_COUNT, Shape::unsigned_values, sizeof(cl_uint)},
      {"CL_PROGRAM_CONTEXT", CL_PROGRAM_CONTEXT, Shape::context, 0},
      {"CL_PROGRAM_NUM_DEVICES", CL_PROGRAM_NUM_DEVICES, Shape::unsigned_values, sizeof(cl_uint)},
      {"CL_PROGRAM_DEVICES", CL_PROGRAM_DEVICES, Shape::devices, 0},
      {"CL_PROGRAM_SOURCE", CL_PROGRAM_SOURCE, Shape::text, 1},
      {"CL_PROGRAM_IL", CL_PROGRAM_IL, Shape::unsigned_values, 1},
      {"CL_PROGRAM_BINARY_SIZES", CL_PROGRAM_BINARY_SIZES, Shape::unsigned_values, sizeof(size_t)},
      {"CL_PROGRAM_NUM_KERNELS", CL_PROGRAM_NUM_KERNELS, Shape::unsigned_values, sizeof(size_t)},
      {"CL_PROGRAM_KERNEL_NAMES", CL_PROGRAM_KERNEL_NAMES, Shape::text, 1},
      {"CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT", CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT, Shape::unsigned_values,
       sizeof(cl_bool)},
      {"CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT", CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT, Shape::unsigned_values,
       sizeof(cl_bool)},
  };
  for (const Named& q : program_queries) {
    print_query(q.name,
                [&](size_t size, void* value, size_t* ret) { return clGetProgramInfo(program, q.param, size, value, ret); },
                q.shape, q.width, scope, program);
  }
  print_binaries(program);
  const Named build_queries[] = {
      {"CL_PROGRAM_BUILD_STATUS", CL_PROGRAM_BUILD_STATUS, Shape::unsigned_values, sizeof(cl_build_status)},
      {"CL_PROGRAM_BUILD_OPTIONS", CL_PROGRAM_BUILD_OPTIONS, Shape::text, 1},
      {"CL_PROGRAM_BUILD_LOG", CL_PROGRAM_BUILD_LOG, Shape::text, 1},
      {"CL_PROGRAM_BINARY_TYPE", CL_PROGRAM_BINARY_TYPE, Shape::unsigned_values, sizeof(cl_program_binary_type)},
      {"CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE", CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
       Shape::unsigned_values, sizeof(size_t)},
  };
  for (cl_device_id device : scope.devices) {
    for (const Named& q : build_queries) {
      print_query(device_name(device, scope) + " " + q.name,
                  [&](size_t size, void* value, size_t* ret) {
                    return clGetProgramBuildInfo(program, device, q.param, size, value, ret);
                  },
                  q.shape, q.width, scope);
    }
  }
}

void dump_program(const std::string& label, cl_program program, const DumpScope& scope) {
  dump_program_queries(label, program, scope);
  size_t names_size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &names_size) != CL_SUCCESS) return;
  std::string names(names_size, '\0');
  clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, names_size, names.data(), nullptr);
  names.resize(std::strlen(names.c_str()));
  size_t start = 0;
  while (start < names.size()) {
    size_t end = names.find(';', start);
    if (end == std::string::npos) end = names.size();
    std::string name = names.substr(start, end - start);
    start = end + 1;
    cl_int status = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, name.c_str(), &status);
    std::printf("kernel %s: create %d\n", name.c_str(), status);
    if (!kernel) continue;
    dump_kernel(kernel, program, scope);
    clReleaseKernel(kernel);
  }
}

}  // namespace query_parity
