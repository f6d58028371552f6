// The real API function behind libjitcache.so, however the app loaded the API's loader. An app
// may link the loader (then dlsym(RTLD_NEXT) finds it) or load it from a module that was itself
// dlopen'ed with RTLD_LOCAL (a Python extension, a plugin): the loader is then in no global scope
// and RTLD_NEXT returns null, but the preloaded hooks still receive the module's calls. So the
// loaded image is also asked directly, by soname and then by file name.
#pragma once

#include <string_view>

namespace jitcache {

struct LoaderLibrary {
  const char* const* sonames;   // null-terminated; asked with dlopen(RTLD_NOLOAD), in order
  std::string_view file_prefix;  // else any loaded object whose file name starts so
};

// `name` from the loader already loaded in this process, never from libjitcache.so itself (that
// would call the hook again, forever); nullptr when no loaded loader exports it (ask again later:
// the app may load it after this call).
void* find_loaded_library_function(const char* name, const LoaderLibrary& loader);

}  // namespace jitcache
