// Module lookup with dl_iterate_phdr (build-ids read from the mapped images) and dladdr, file
// times with stat.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <map>
#include <set>
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

// The loaded object the loader gave a DT_NEEDED `name`: dlopen(RTLD_NOLOAD) matches it by name or
// soname among the loaded objects only, as the loader did, and loads nothing. Empty when none.
std::string loaded_object_named(const std::string& name) {
  void* handle = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return {};
  link_map* map = nullptr;
  std::string path;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    path = real_path_or_same(map->l_name);
  }
  ::dlclose(handle);
  return path;
}

// Every loaded object that `library` needs, directly or not, and itself. `known` memoizes each
// object's resolved DT_NEEDED list across the calls of one compiler_libraries_of.
std::set<std::string> dependency_closure(const std::string& library, std::map<std::string, std::vector<std::string>>& known) {
  std::set<std::string> closure{library};
  std::vector<std::string> pending{library};
  while (!pending.empty()) {
    const std::string path = pending.back();
    pending.pop_back();
    auto [it, added] = known.try_emplace(path);
    if (added) {
      for (const std::string& name : read_needed_libraries(path)) {
        if (std::string found = loaded_object_named(name); !found.empty()) it->second.push_back(found);
      }
    }
    for (const std::string& dependency : it->second) {
      if (closure.insert(dependency).second) pending.push_back(dependency);
    }
  }
  return closure;
}

}  // namespace

std::vector<std::string> compiler_libraries_of(const std::vector<std::string>& driver_libraries) {
  std::vector<std::string> libraries = loaded_compiler_libraries();
  if (driver_libraries.empty()) return libraries;
  std::map<std::string, std::vector<std::string>> known;
  std::set<std::string> drivers_closure;
  for (const std::string& driver : driver_libraries) drivers_closure.merge(dependency_closure(driver, known));
  std::erase_if(libraries, [&](const std::string& library) {
    if (drivers_closure.count(library) > 0) return false;
    const std::set<std::string> own = dependency_closure(library, known);
    return std::none_of(driver_libraries.begin(), driver_libraries.end(),
                        [&](const std::string& driver) { return own.count(driver) > 0; });
  });
  return libraries;
}

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
