// What the shim remembers about the app's programs: how each was created (to key its builds) and
// the shadow program serving it after a cache hit. What the app holds is app_holds.hpp's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hashing/build_inputs.hpp"
#include "shim/opencl/opencl_api.hpp"

namespace jitcache::opencl {

class LazyAnswers;  // lazy_answers.hpp

// A clCompileProgram not run yet because the cache holds its result (see compile_link_hooks.cpp);
// the arguments to run it with if a link misses or the app asks for the compiled object.
struct DeferredCompile {
  std::vector<cl_device_id> devices;   // empty: every device of the program
  std::string options;
  std::vector<cl_program> headers;    // input_headers, retained until the compile runs or is dropped
  std::vector<std::string> header_names;
  // What the cache recorded about the object, per device the compile targets (same order), so
  // that queries on it need no compile (deferred_answers.cpp). Empty binary / no log: unknown.
  std::vector<cl_device_id> compiled_for;
  std::vector<std::string> binaries;
  std::vector<std::shared_ptr<const LazyAnswers>> answers;  // the whole log; null: none recorded
  std::vector<std::optional<std::string>> logs;  // else the sidecar's excerpt, when it is whole
};

struct TrackedProgram {
  ProgramKind kind = ProgramKind::source;
  // Source text or IL bytes, shared: copies of the record (find) do not copy the text.
  std::shared_ptr<const std::string> input;
  cl_context context = nullptr;
  std::map<cl_uint, std::string> spec_constants;
  cl_program shadow = nullptr;  // built from cached binaries; owns one reference
  std::string compiled_digest;  // after a keyed clCompileProgram: its device-independent digest
  std::shared_ptr<DeferredCompile> deferred;
};

class ProgramRegistry {
 public:
  void track(cl_program program, TrackedProgram tracked);
  std::optional<TrackedProgram> find(cl_program program) const;  // a copy (the source is shared)
  void set_spec_constant(cl_program program, cl_uint id, std::string value);

  // Installs `shadow` (nullptr: none) for `program`; returns the previous shadow to release.
  cl_program replace_shadow(cl_program program, cl_program shadow);
  cl_program shadow_of(cl_program program) const;
  cl_program program_of_shadow(cl_program shadow) const;  // nullptr when not a shadow

  // After clCompileProgram: how the compiled object is keyed (empty: not keyable) and the
  // compile still to run (nullptr: none). Returns the previous deferred compile to drop.
  std::shared_ptr<DeferredCompile> set_compiled(cl_program program, std::string digest,
                                                std::shared_ptr<DeferredCompile> deferred);
  // The program's deferred compile, left in place (nullptr: none).
  std::shared_ptr<DeferredCompile> deferred_of(cl_program program) const;
  // Removes and returns the program's deferred compile (nullptr: none).
  std::shared_ptr<DeferredCompile> take_deferred(cl_program program);

  // Forgets the program; returns what was tracked (its shadow still needs a release).
  std::optional<TrackedProgram> forget(cl_program program);
};

ProgramRegistry& registry();

}  // namespace jitcache::opencl
