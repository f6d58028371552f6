// Under LD_PRELOAD, symbol interposition never sees apps that dlopen libOpenCL and call through
// dlsym'ed pointers (OpenCV, hashcat). The ICD loader calls its layers for every call, whoever
// loaded it, so a preloaded libjitcache.so also lists itself in OPENCL_LAYERS before the app can
// initialise a loader. Where both are active the layer owns the hooks (opencl/hook_owner.hpp),
// as under `jitcache run`. Loaders without layer support ignore the variable.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <string>
#include <string_view>

namespace {

std::string resolved_path(const char* path) {
  char buffer[PATH_MAX];
  return ::realpath(path, buffer) ? std::string(buffer) : std::string();
}

// Whether `list` (separated by any of `separators`) names `file`, however it is spelled.
bool names_file(const char* list, std::string_view separators, const std::string& file) {
  if (!list) return false;
  std::string_view rest(list);
  while (!rest.empty()) {
    const std::size_t end = rest.find_first_of(separators);
    const std::string item(rest.substr(0, end));
    if (!item.empty() && resolved_path(item.c_str()) == file) return true;
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return false;
}

__attribute__((constructor)) void list_preloaded_library_as_layer() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&list_preloaded_library_as_layer), &info) || !info.dli_fname) return;
  const std::string self = resolved_path(info.dli_fname);
  if (self.empty()) return;
  // Only when preloaded: a process that links or dlopens the library for itself is left alone, and
  // a loader that loaded it as a layer already lists it.
  if (!names_file(::getenv("LD_PRELOAD"), ": ", self)) return;
  const char* layers = ::getenv("OPENCL_LAYERS");
  if (names_file(layers, ":", self)) return;
  const std::string value = layers && *layers ? self + ":" + layers : self;
  ::setenv("OPENCL_LAYERS", value.c_str(), 1);
}

}  // namespace
