// A preloaded app tells capture helpers it is at work as it starts, not at its first OpenCL call:
// an interpreter's imports come first (OpenCV's Python app: 0.6 s of CPU on an idle machine), and
// a helper that found no app at work built at full priority beside them. Run 2 of that app,
// started the moment run 1 exited on a busy machine, took 1.22 × no cache with PoCL's cache off
// (median of 5), 0.90 × when announced at its start (docs/benchmarks.md).
//
// Not in a constructor: this library's constructors may run before its static objects are built
// (the store's layout names), which the announcement reads. glibc's __libc_start_main is called
// after every loaded library's initialisation and before the program's main, so it is wrapped
// here. Programs that do not start through it (static ones, other C libraries) announce at their
// first OpenCL call (clGetPlatformIDs in preload_exports.cpp) or first build, as before.
#include <dlfcn.h>
#include <unistd.h>

#include "core/engine.hpp"

namespace {

using Main = int (*)(int, char**, char**);
using StartMain = int (*)(Main, int, char**, void (*)(), void (*)(), void (*)(), void*);

}  // namespace

extern "C" __attribute__((visibility("default"))) int __libc_start_main(Main main, int argc, char** argv,
                                                                        void (*init)(), void (*fini)(),
                                                                        void (*rtld_fini)(), void* stack_end) {
  const auto real = reinterpret_cast<StartMain>(::dlsym(RTLD_NEXT, "__libc_start_main"));
  if (!real) ::_exit(127);  // no glibc below: nothing could start the program
  jitcache::Engine::announce_app_early();
  return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}
