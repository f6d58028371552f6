#include "hashing/build_inputs.hpp"

namespace jitcache {

// These names enter the key and the trace: changing one is a schema change.
const char* to_string(Api api) {
  switch (api) {
    case Api::opencl: return "opencl";
    case Api::level_zero: return "level_zero";
  }
  return "unknown";
}

const char* to_string(ProgramKind kind) {
  switch (kind) {
    case ProgramKind::source: return "source";
    case ProgramKind::il: return "il";
    case ProgramKind::compiled: return "compiled";
    case ProgramKind::linked: return "linked";
  }
  return "unknown";
}

}  // namespace jitcache
