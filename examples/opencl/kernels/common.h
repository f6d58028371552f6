// Shared by the example's kernels. Edit SCALE and the program that includes this file must be
// rebuilt: jitcache keys on the contents of every included header.
#ifndef SCALE
#define SCALE 3.0f
#endif

inline float transform(float x) { return x * SCALE + 1.0f; }
