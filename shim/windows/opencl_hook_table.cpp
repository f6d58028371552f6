#include "shim/windows/opencl_hook_table.hpp"

#include <cstring>

#include "shim/opencl/hooked_functions.hpp"
#include "shim/opencl/hooks.hpp"

namespace jitcache::windows {
namespace {

namespace cl = jitcache::opencl;

// x64 has one calling convention, so the hooks (declared with the API's own signatures) can
// stand in for the exports directly: the same functions the Linux exports forward to.
const Replacement kOpenClHooks[] = {  // sized by its entries: a spare one would be a null name
#define JITCACHE_REPLACEMENT(result, api_name, hook, parameters, arguments) \
  {#api_name, reinterpret_cast<void*>(&cl::hook)},
    JITCACHE_HOOKED_OPENCL_FUNCTIONS(JITCACHE_REPLACEMENT)
#undef JITCACHE_REPLACEMENT
};

}  // namespace

std::span<const Replacement> opencl_replacements() { return kOpenClHooks; }

void* opencl_hook_for(const char* name) {
  for (const Replacement& hook : kOpenClHooks) {
    if (std::strcmp(hook.name, name) == 0) return hook.function;
  }
  return nullptr;
}

}  // namespace jitcache::windows
