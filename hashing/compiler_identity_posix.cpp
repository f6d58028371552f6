// Module lookup with dladdr / dl_iterate_phdr, file times with stat.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <string_view>

#include "hashing/compiler_identity.hpp"
#include "hashing/compiler_identity_platform.hpp"

namespace jitcache {
namespace {

// Backends whose version decides codegen, by file-name prefix:
//   libLLVM, libclang                      LLVM-based compilers (Mesa, POCL, ROCm, oneAPI)
//   libigc, libigdfcl                      Intel Graphics Compiler and its frontend
//   libnvidia-ptxjitcompiler, -compiler,   NVIDIA PTX JIT, OpenCL compiler, NVVM
//   libnvidia-nvvm
//   libamd_comgr                           AMD code-object manager (ROCm)
//   libpocl-devices                        POCL device drivers
constexpr std::array<std::string_view, 9> kCompilerLibraryPrefixes = {
    "libLLVM",          "libclang",     "libigc",          "libigdfcl",      "libnvidia-ptxjitcompiler",
    "libnvidia-compiler", "libnvidia-nvvm", "libamd_comgr", "libpocl-devices"};

bool is_compiler_library(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::any_of(kCompilerLibraryPrefixes.begin(), kCompilerLibraryPrefixes.end(),
                     [name](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; });
}

std::string real_path_or_same(const char* path) {
  char resolved[PATH_MAX];
  return ::realpath(path, resolved) != nullptr ? std::string(resolved) : std::string(path);
}

int collect_compiler_library(dl_phdr_info* info, std::size_t, void* data) {
  auto* paths = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0' && is_compiler_library(info->dlpi_name)) {
    paths->push_back(real_path_or_same(info->dlpi_name));
  }
  return 0;
}

}  // namespace

bool read_size_and_mtime(LibraryIdentity& identity) {
  struct stat info {};
  if (::stat(identity.path.c_str(), &info) != 0) return false;
  identity.size = static_cast<std::uint64_t>(info.st_size);
  identity.mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  return true;
}

std::string library_containing(const void* address) {
  Dl_info info{};
  if (address == nullptr || ::dladdr(address, &info) == 0) return {};
  if (info.dli_fname == nullptr || info.dli_fname[0] == '\0') return {};
  return real_path_or_same(info.dli_fname);
}

std::vector<std::string> loaded_compiler_libraries() {
  std::vector<std::string> paths;
  ::dl_iterate_phdr(collect_compiler_library, &paths);
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

}  // namespace jitcache
