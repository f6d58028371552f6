// Translates a zeModuleCreate descriptor into the engine's ProgramInputs.
#pragma once

#include <string>

#include <ze_api.h>

#include "hashing/build_inputs.hpp"

namespace jitcache::level_zero {

struct ModuleInputs {
  ProgramInputs program;
  std::string uncacheable;  // non-empty: pass the call through uncached, this is why
};

// For a SPIR-V descriptor (the caller checks the format). Each specialization constant is read
// with the width the module's SPIR-V declares for its SpecId; a module that cannot be sized that
// way, or a descriptor with a pNext extension the cache does not understand, is uncacheable.
ModuleInputs module_inputs(const ze_module_desc_t& desc);

}  // namespace jitcache::level_zero
