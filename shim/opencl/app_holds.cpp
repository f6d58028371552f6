#include "shim/opencl/app_holds.hpp"

#include <mutex>
#include <unordered_map>

namespace jitcache::opencl {
namespace {

struct ProgramHold {
  std::size_t references = 0;
  std::size_t kernels = 0;
  std::size_t shadow_kernels = 0;
};

struct KernelHold {
  std::size_t references = 0;
  cl_program program = nullptr;
  bool from_shadow = false;
};

struct Holds {
  std::mutex mutex;
  std::unordered_map<cl_program, ProgramHold> programs;
  std::unordered_map<cl_kernel, KernelHold> kernels;
  std::unordered_map<cl_context, std::size_t> contexts;
};

Holds& holds() {
  static Holds* s = new Holds;  // never destroyed: hooks may run during exit
  return *s;
}

// Leaves the program when the app holds it no more.
Hold program_hold_after_change(std::unordered_map<cl_program, ProgramHold>::iterator it) {
  if (it->second.references > 0 || it->second.kernels > 0) return Hold::kept;
  holds().programs.erase(it);
  return Hold::gone;
}

}  // namespace

void program_created(cl_program program) {
  std::lock_guard lock(holds().mutex);
  holds().programs[program] = {1, 0, 0};
}

void program_retained(cl_program program) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().programs.find(program);
  if (it != holds().programs.end()) ++it->second.references;
}

Hold program_released(cl_program program) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().programs.find(program);
  if (it == holds().programs.end() || it->second.references == 0) return Hold::unknown;
  --it->second.references;
  return program_hold_after_change(it);
}

std::size_t kernels_of(cl_program program) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().programs.find(program);
  return it == holds().programs.end() ? 0 : it->second.kernels;
}

std::size_t shadow_kernels_of(cl_program program) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().programs.find(program);
  return it == holds().programs.end() ? 0 : it->second.shadow_kernels;
}

void kernel_created(cl_kernel kernel, cl_program program, bool from_shadow) {
  std::lock_guard lock(holds().mutex);
  // A handle the driver hands out again: the kernel recorded there was released without a word.
  if (auto old = holds().kernels.find(kernel); old != holds().kernels.end()) {
    if (auto it = holds().programs.find(old->second.program); it != holds().programs.end()) {
      --it->second.kernels;
      if (old->second.from_shadow) --it->second.shadow_kernels;
    }
  }
  auto it = holds().programs.find(program);
  if (it != holds().programs.end()) {
    ++it->second.kernels;
    if (from_shadow) ++it->second.shadow_kernels;
  }
  holds().kernels[kernel] = {1, program, from_shadow};
}

void kernel_retained(cl_kernel kernel) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().kernels.find(kernel);
  if (it != holds().kernels.end()) ++it->second.references;
}

KernelRelease kernel_released(cl_kernel kernel) {
  std::lock_guard lock(holds().mutex);
  KernelRelease release;
  auto it = holds().kernels.find(kernel);
  if (it == holds().kernels.end() || it->second.references == 0) return release;
  release.program = it->second.program;
  release.from_shadow = it->second.from_shadow;
  if (--it->second.references > 0) {
    release.kernel = Hold::kept;
    return release;
  }
  release.kernel = Hold::gone;
  holds().kernels.erase(it);
  auto program = holds().programs.find(release.program);
  if (program == holds().programs.end()) return release;
  --program->second.kernels;
  if (release.from_shadow) --program->second.shadow_kernels;
  release.program_hold = program_hold_after_change(program);
  return release;
}

cl_program program_of_kernel(cl_kernel kernel, bool* from_shadow) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().kernels.find(kernel);
  if (it == holds().kernels.end()) return nullptr;
  if (from_shadow) *from_shadow = it->second.from_shadow;
  return it->second.program;
}

void context_created(cl_context context) {
  std::lock_guard lock(holds().mutex);
  holds().contexts[context] = 1;
}

void context_retained(cl_context context) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().contexts.find(context);
  if (it != holds().contexts.end()) ++it->second;
}

bool last_context_reference(cl_context context) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().contexts.find(context);
  return it != holds().contexts.end() && it->second == 1;
}

void context_released(cl_context context) {
  std::lock_guard lock(holds().mutex);
  auto it = holds().contexts.find(context);
  if (it == holds().contexts.end()) return;
  if (--it->second == 0) holds().contexts.erase(it);
}

bool app_holds_context(cl_context context) {
  std::lock_guard lock(holds().mutex);
  return holds().contexts.count(context) > 0;
}

}  // namespace jitcache::opencl
