#include "shim/opencl/program_registry.hpp"

#include <mutex>
#include <utility>
#include <unordered_map>

namespace jitcache::opencl {
namespace {

struct State {
  mutable std::mutex mutex;
  std::unordered_map<cl_program, TrackedProgram> programs;
  std::unordered_map<cl_program, cl_program> program_by_shadow;
};

State& state() {
  static State* s = new State;  // never destroyed: hooks may run during exit
  return *s;
}

// Programs built from one key in one context share a shadow (the memory tier's); the reverse map
// names one of them, and only that one's leaving removes it.
void forget_shadow_of(cl_program shadow, cl_program program) {
  auto it = state().program_by_shadow.find(shadow);
  if (it != state().program_by_shadow.end() && it->second == program) state().program_by_shadow.erase(it);
}

}  // namespace

ProgramRegistry& registry() {
  static ProgramRegistry instance;
  return instance;
}

void ProgramRegistry::track(cl_program program, TrackedProgram tracked) {
  std::lock_guard lock(state().mutex);
  state().programs[program] = std::move(tracked);
}

std::optional<TrackedProgram> ProgramRegistry::find(cl_program program) const {
  std::lock_guard lock(state().mutex);
  auto it = state().programs.find(program);
  if (it == state().programs.end()) return std::nullopt;
  return it->second;
}

void ProgramRegistry::set_spec_constant(cl_program program, cl_uint id, std::string value) {
  std::lock_guard lock(state().mutex);
  auto it = state().programs.find(program);
  if (it != state().programs.end()) it->second.spec_constants[id] = std::move(value);
}

cl_program ProgramRegistry::replace_shadow(cl_program program, cl_program shadow) {
  std::lock_guard lock(state().mutex);
  auto it = state().programs.find(program);
  if (it == state().programs.end()) return shadow;  // program gone: caller releases the new one
  cl_program previous = it->second.shadow;
  if (previous) forget_shadow_of(previous, program);
  it->second.shadow = shadow;
  if (shadow) state().program_by_shadow[shadow] = program;
  return previous;
}

cl_program ProgramRegistry::shadow_of(cl_program program) const {
  std::lock_guard lock(state().mutex);
  auto it = state().programs.find(program);
  return it == state().programs.end() ? nullptr : it->second.shadow;
}

cl_program ProgramRegistry::program_of_shadow(cl_program shadow) const {
  std::lock_guard lock(state().mutex);
  auto it = state().program_by_shadow.find(shadow);
  return it == state().program_by_shadow.end() ? nullptr : it->second;
}

std::shared_ptr<DeferredCompile> ProgramRegistry::set_compiled(cl_program program, std::string digest,
                                                              std::shared_ptr<DeferredCompile> deferred) {
  std::lock_guard lock(state().mutex);
  auto it = state().programs.find(program);
  if (it == state().programs.end()) return deferred;  // program gone: caller drops it
  it->second.compiled_digest = std::move(digest);
  std::swap(it->second.deferred, deferred);
  return deferred;
}

std::shared_ptr<DeferredCompile> ProgramRegistry::deferred_of(cl_program program) const {
  std::lock_guard lock(state().mutex);
  auto it = state().programs.find(program);
  return it == state().programs.end() ? nullptr : it->second.deferred;
}

std::shared_ptr<DeferredCompile> ProgramRegistry::take_deferred(cl_program program) {
  std::lock_guard lock(state().mutex);
  auto it = state().programs.find(program);
  if (it == state().programs.end()) return nullptr;
  return std::exchange(it->second.deferred, nullptr);
}

std::optional<TrackedProgram> ProgramRegistry::forget(cl_program program) {
  std::lock_guard lock(state().mutex);
  auto it = state().programs.find(program);
  if (it == state().programs.end()) return std::nullopt;
  TrackedProgram tracked = std::move(it->second);
  state().programs.erase(it);
  if (tracked.shadow) forget_shadow_of(tracked.shadow, program);
  return tracked;
}

}  // namespace jitcache::opencl
