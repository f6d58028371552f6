// Loads an OpenCL- or Level Zero-linked plugin with dlopen(RTLD_LOCAL), as python3 loads
// pyopencl's extension, and runs it: plugin_main(argc, argv) with the arguments after the plugin,
// else run_plugin(). The host itself never links a loader.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: plugin_host_app PLUGIN.so [ARGS...]\n");
    return 2;
  }
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    std::fprintf(stderr, "plugin_host_app: %s\n", dlerror());
    return 1;
  }
  if (auto plugin_main = reinterpret_cast<int (*)(int, char**)>(dlsym(plugin, "plugin_main"))) {
    return plugin_main(argc - 1, argv + 1);
  }
  auto run = reinterpret_cast<int (*)()>(dlsym(plugin, "run_plugin"));
  return run ? run() : 1;
}
