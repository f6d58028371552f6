// The Level Zero example as a plugin linked against libze_loader, for plugin_host_app to dlopen
// with RTLD_LOCAL: the loader is then in no global scope, as under a Python extension.
#define main level_zero_example_main
#include "examples/level_zero/level_zero_example.cpp"
#undef main

extern "C" __attribute__((visibility("default"))) int plugin_main(int argc, char** argv) {
  return level_zero_example_main(argc, argv);
}
