// Module lookup with dl_iterate_phdr (build-ids read from the mapped images) and dladdr, file
// times with stat.
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

// Whether [vaddr, vaddr + size) lies inside one of the image's loaded segments.
bool is_mapped(const dl_phdr_info& image, ElfW(Addr) vaddr, ElfW(Xword) size) {
  for (ElfW(Half) i = 0; i < image.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = image.dlpi_phdr[i];
    if (segment.p_type == PT_LOAD && vaddr >= segment.p_vaddr && size <= segment.p_memsz &&
        vaddr - segment.p_vaddr <= segment.p_memsz - size) {
      return true;
    }
  }
  return false;
}

// The GNU build-id of an image as the loader mapped it: read from memory, no file I/O.
std::string mapped_build_id(const dl_phdr_info& image) {
  for (ElfW(Half) i = 0; i < image.dlpi_phnum; ++i) {
    const ElfW(Phdr)& notes = image.dlpi_phdr[i];
    if (notes.p_type != PT_NOTE || !is_mapped(image, notes.p_vaddr, notes.p_memsz)) continue;
    const auto* start = reinterpret_cast<const char*>(image.dlpi_addr + notes.p_vaddr);
    std::string build_id = build_id_in_native_notes(std::string_view(start, notes.p_memsz), notes.p_align);
    if (!build_id.empty()) return build_id;
  }
  return {};
}

// A loaded library by name, with the build-id of its mapped image noted for identify_library.
std::string remember_loaded(const dl_phdr_info& image) {
  std::string path = real_path_or_same(image.dlpi_name);
  note_mapped_build_id(path, mapped_build_id(image));
  return path;
}

int collect_compiler_library(dl_phdr_info* info, std::size_t, void* data) {
  auto* paths = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0' && is_compiler_library(info->dlpi_name)) {
    paths->push_back(remember_loaded(*info));
  }
  return 0;
}

struct ContainingImage {
  ElfW(Addr) address;
  std::string path;  // empty until found
};

int find_containing_image(dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<ContainingImage*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0' || search->address < info->dlpi_addr) return 0;
  if (!is_mapped(*info, search->address - info->dlpi_addr, 1)) return 0;
  search->path = remember_loaded(*info);
  return 1;
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
  if (address == nullptr) return {};
  ContainingImage search{reinterpret_cast<ElfW(Addr)>(address), {}};
  ::dl_iterate_phdr(find_containing_image, &search);
  if (!search.path.empty()) return search.path;
  // The main program (its loader entry has no name): dladdr knows its file.
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0') return {};
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
