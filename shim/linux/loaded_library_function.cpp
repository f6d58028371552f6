#include "shim/linux/loaded_library_function.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <string>
#include <vector>

namespace jitcache {
namespace {

// The address range the loader mapped libjitcache.so's segments at (the span dladdr attributes
// to it), found once: is_ours runs for every real function resolved, and a dladdr per call walks
// every loaded object.
struct ImageRange {
  ElfW(Addr) begin = 0, end = 0;
};

ImageRange own_image() {
  ImageRange range;
  auto visit = [](dl_phdr_info* info, size_t, void* data) -> int {
    auto* range = static_cast<ImageRange*>(data);
    const auto ours = reinterpret_cast<ElfW(Addr)>(&find_loaded_library_function);
    ImageRange image{~ElfW(Addr){0}, 0};
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& segment = info->dlpi_phdr[i];
      if (segment.p_type != PT_LOAD) continue;
      image.begin = std::min(image.begin, info->dlpi_addr + segment.p_vaddr);
      image.end = std::max(image.end, info->dlpi_addr + segment.p_vaddr + segment.p_memsz);
    }
    if (ours < image.begin || ours >= image.end) return 0;
    *range = image;
    return 1;
  };
  ::dl_iterate_phdr(visit, &range);
  return range;
}

bool is_ours(const void* function) {
  static const ImageRange ours = own_image();
  const auto address = reinterpret_cast<ElfW(Addr)>(function);
  return address >= ours.begin && address < ours.end;
}

// `name` from the already loaded object `file`; the handle only pins it for the lookup.
void* function_of_loaded(const char* file, const char* name) {
  void* handle = ::dlopen(file, RTLD_NOLOAD | RTLD_LAZY | RTLD_LOCAL);
  if (!handle) return nullptr;
  void* function = ::dlsym(handle, name);
  ::dlclose(handle);
  return function && !is_ours(function) ? function : nullptr;
}

std::vector<std::string> loaded_files_named(std::string_view prefix) {
  std::vector<std::string> files;
  auto visit = [](dl_phdr_info* info, size_t, void* data) -> int {
    auto* found = static_cast<std::pair<std::string_view, std::vector<std::string>*>*>(data);
    if (!info->dlpi_name || !*info->dlpi_name) return 0;
    std::string_view path = info->dlpi_name;
    std::string_view base = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
    if (base.substr(0, found->first.size()) == found->first) found->second->emplace_back(path);
    return 0;
  };
  std::pair<std::string_view, std::vector<std::string>*> data{prefix, &files};
  ::dl_iterate_phdr(visit, &data);
  return files;
}

}  // namespace

void* find_loaded_library_function(const char* name, const LoaderLibrary& loader) {
  if (void* next = ::dlsym(RTLD_NEXT, name); next && !is_ours(next)) return next;
  for (const char* const* soname = loader.sonames; soname && *soname; ++soname) {
    if (void* function = function_of_loaded(*soname, name)) return function;
  }
  if (loader.file_prefix.empty()) return nullptr;
  for (const std::string& file : loaded_files_named(loader.file_prefix)) {
    if (void* function = function_of_loaded(file.c_str(), name)) return function;
  }
  return nullptr;
}

}  // namespace jitcache
