// A small Level Zero app: creates a module from the SPIR-V shipped with it (vector_ops.spv), with
// specialization constants, creates each kernel by name, and checks what the module reports
// (kernel names, properties, native binary). Everything it prints on stdout is a property of the
// compiled module, so a cached run must print exactly what an uncached run prints; the module
// creation time goes to stderr.
//
//   level_zero_example [--spirv FILE] [--scale N] [--saturate] [--flags FLAGS] [--build-log]
//                      [--modules N] [--program-desc]
//
// --modules N creates the module N times (a second create in one process is served from the
// cache); --program-desc chains a ze_module_program_exp_desc_t, which the cache does not handle.
#include <ze_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t kScaleSpecId = 1;     // int
constexpr std::uint32_t kSaturateSpecId = 2;  // bool: one byte, as the SPIR-V declares it
const char* const kKernelNames[] = {"add_offset", "dot_partial", "scale_ints"};

struct Arguments {
  std::string spirv = JITCACHE_EXAMPLE_SPIRV;
  std::int32_t scale = 3;
  bool saturate = false;
  std::string flags = "-ze-opt-level=2";
  bool build_log = false;
  int modules = 1;
  bool program_desc = false;
};

[[noreturn]] void fail(const std::string& what, ze_result_t result) {
  std::fprintf(stderr, "level_zero_example: %s failed (0x%x)\n", what.c_str(), static_cast<unsigned>(result));
  std::exit(1);
}

void check(ze_result_t result, const char* what) {
  if (result != ZE_RESULT_SUCCESS) fail(what, result);
}

Arguments parse(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "level_zero_example: %s needs a value\n", flag.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--spirv") args.spirv = value();
    else if (flag == "--scale") args.scale = std::atoi(value().c_str());
    else if (flag == "--saturate") args.saturate = true;
    else if (flag == "--flags") args.flags = value();
    else if (flag == "--build-log") args.build_log = true;
    else if (flag == "--modules") args.modules = std::max(1, std::atoi(value().c_str()));
    else if (flag == "--program-desc") args.program_desc = true;
    else {
      std::fprintf(stderr, "level_zero_example: unknown argument %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return args;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("reading " + path, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// FNV-1a: enough to show on stdout that two runs got the same native binary.
std::uint64_t fnv1a(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::uint8_t byte : bytes) hash = (hash ^ byte) * 0x100000001b3ull;
  return hash;
}

struct Device {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
};

Device open_first_device() {
  Device d;
  check(zeInit(0), "zeInit");
  std::uint32_t count = 1;
  check(zeDriverGet(&count, &d.driver), "zeDriverGet");
  if (count == 0) fail("finding a Level Zero driver", ZE_RESULT_ERROR_UNINITIALIZED);
  count = 1;
  check(zeDeviceGet(d.driver, &count, &d.device), "zeDeviceGet");
  if (count == 0) fail("finding a Level Zero device", ZE_RESULT_ERROR_UNINITIALIZED);
  ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  check(zeContextCreate(d.driver, &context_desc, &d.context), "zeContextCreate");
  return d;
}

std::string build_log_text(ze_module_build_log_handle_t log) {
  std::size_t size = 0;
  check(zeModuleBuildLogGetString(log, &size, nullptr), "zeModuleBuildLogGetString");
  std::string text(size, '\0');
  check(zeModuleBuildLogGetString(log, &size, text.data()), "zeModuleBuildLogGetString");
  while (!text.empty() && text.back() == '\0') text.pop_back();
  check(zeModuleBuildLogDestroy(log), "zeModuleBuildLogDestroy");
  return text;
}

// Prints what the module reports; fails when a kernel is missing or misnamed.
void describe_module(ze_module_handle_t module) {
  std::uint32_t count = 0;
  check(zeModuleGetKernelNames(module, &count, nullptr), "zeModuleGetKernelNames");
  std::vector<const char*> names(count);
  check(zeModuleGetKernelNames(module, &count, names.data()), "zeModuleGetKernelNames");
  std::printf("kernels:");
  for (const char* name : names) std::printf(" %s", name);
  std::printf("\n");

  for (const char* expected : kKernelNames) {
    ze_kernel_desc_t kernel_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, expected};
    ze_kernel_handle_t kernel = nullptr;
    check(zeKernelCreate(module, &kernel_desc, &kernel), (std::string("zeKernelCreate ") + expected).c_str());
    std::size_t size = 0;
    check(zeKernelGetName(kernel, &size, nullptr), "zeKernelGetName");
    std::string name(size, '\0');
    check(zeKernelGetName(kernel, &size, name.data()), "zeKernelGetName");
    if (std::strcmp(name.c_str(), expected) != 0) {
      fail("kernel name check for " + std::string(expected), ZE_RESULT_ERROR_UNKNOWN);
    }
    check(zeKernelDestroy(kernel), "zeKernelDestroy");
  }
  std::printf("kernels created by name: %zu\n", std::size(kKernelNames));

  ze_module_properties_t properties = {ZE_STRUCTURE_TYPE_MODULE_PROPERTIES, nullptr, 0};
  check(zeModuleGetProperties(module, &properties), "zeModuleGetProperties");
  std::printf("module imports unresolved: %s\n", (properties.flags & ZE_MODULE_PROPERTY_FLAG_IMPORTS) ? "yes" : "no");

  std::size_t size = 0;
  check(zeModuleGetNativeBinary(module, &size, nullptr), "zeModuleGetNativeBinary");
  std::vector<std::uint8_t> binary(size);
  check(zeModuleGetNativeBinary(module, &size, binary.data()), "zeModuleGetNativeBinary");
  std::printf("native binary: %zu bytes, fnv1a %016llx\n", size, static_cast<unsigned long long>(fnv1a(binary)));
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments args = parse(argc, argv);
  const std::vector<std::uint8_t> spirv = read_file(args.spirv);
  const Device d = open_first_device();

  const std::uint8_t saturate = args.saturate ? 1 : 0;
  const std::uint32_t ids[] = {kScaleSpecId, kSaturateSpecId};
  const void* values[] = {&args.scale, &saturate};
  ze_module_constants_t constants = {2, ids, values};

  const std::uint8_t* input = spirv.data();
  const std::size_t input_size = spirv.size();
  const char* flags = args.flags.c_str();
  const ze_module_constants_t* constants_list = &constants;
  ze_module_program_exp_desc_t program_desc = {ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC, nullptr, 1, &input_size,
                                               &input, &flags, &constants_list};

  ze_module_desc_t desc = {ZE_STRUCTURE_TYPE_MODULE_DESC,
                           args.program_desc ? &program_desc : nullptr,
                           ZE_MODULE_FORMAT_IL_SPIRV,
                           spirv.size(),
                           spirv.data(),
                           flags,
                           &constants};

  for (int i = 0; i < args.modules; ++i) {
    ze_module_handle_t module = nullptr;
    ze_module_build_log_handle_t log = nullptr;
    auto start = std::chrono::steady_clock::now();
    ze_result_t result = zeModuleCreate(d.context, d.device, &desc, &module, args.build_log ? &log : nullptr);
    std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    std::fprintf(stderr, "level_zero_example: zeModuleCreate %.3f ms\n", took.count());
    if (log != nullptr) std::printf("build log: \"%s\"\n", build_log_text(log).c_str());
    check(result, "zeModuleCreate");
    describe_module(module);
    check(zeModuleDestroy(module), "zeModuleDestroy");
  }
  check(zeContextDestroy(d.context), "zeContextDestroy");
  std::printf("level zero example ok\n");
  return 0;
}
