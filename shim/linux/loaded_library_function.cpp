#include "shim/linux/loaded_library_function.hpp"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

namespace jitcache {
namespace {

const void* object_of(const void* address) {
  Dl_info info{};
  return ::dladdr(address, &info) ? info.dli_fbase : nullptr;
}

bool is_ours(const void* function) {
  return object_of(function) == object_of(reinterpret_cast<const void*>(&find_loaded_library_function));
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
