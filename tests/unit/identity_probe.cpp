// A small shared library with a GNU build-id, loaded by hashing_compiler_identity_test.
extern "C" __attribute__((visibility("default"))) int jitcache_identity_probe() { return 42; }
