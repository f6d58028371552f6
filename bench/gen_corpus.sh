#!/usr/bin/env bash
# Writes a synthetic corpus of OpenCL programs shaped like real ones (a library of inline helper
# functions, most of them unused, plus kernels that call some of them) at the sizes given in
# bytes: bench/gen_corpus.sh OUT_DIR 1024 10240 ...  ->  OUT_DIR/k<size>.cl
# Deterministic: the same sizes always give the same sources (and so the same cache keys).
set -euo pipefail
out=$1; shift
mkdir -p "$out"
for size in "$@"; do
  awk -v size="$size" 'BEGIN {
    text = "// synthetic jitcache benchmark program, " size " bytes\n"
    text = text "#define SCALE(x) ((x) * 0.5f + 1.0f)\n"
    n = 0; kernels = 0
    while (length(text) < size) {
      h = "static inline float helper_" n "(float x, float y) {\n" \
          "  float a = SCALE(x) * " (n % 7 + 1) ".25f + y;\n" \
          "  for (int i = 0; i < " (n % 5 + 2) "; ++i) a = a * 0.75f + sin(y + (float)i);\n" \
          "  return a > " n ".0f ? a - y : fma(a, x, " (n % 3) ".5f);\n}\n"
      text = text h
      if (n % 8 == 7) {
        k = "__kernel void kernel_" kernels "(__global const float* in, __global float* out, const uint n) {\n" \
            "  size_t gid = get_global_id(0);\n  if (gid >= n) return;\n  float v = in[gid];\n"
        for (j = 0; j < 4; ++j) k = k "  v = helper_" (n - j * 2) "(v, (float)gid);\n"
        k = k "  out[gid] = v;\n}\n"
        text = text k; kernels++
      }
      n++
    }
    if (kernels == 0) text = text "__kernel void kernel_0(__global float* out) { out[get_global_id(0)] = helper_0(1.0f, 2.0f); }\n"
    printf "%s", text
  }' > "$out/k$size.cl"
done
