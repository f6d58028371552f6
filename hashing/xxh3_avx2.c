/* XXH3 one-shot hashes compiled for AVX2, from Debian's xxhash.h (XXH_INLINE_ALL: every function
 * static in this file). Called only when the CPU has AVX2 (hashing/digest.cpp): the static
 * libxxhash.a the shim links is built for SSE2 and has no dispatching entry points. C, not C++, so
 * that no inline function of a C++ header is emitted here with AVX2 code for the linker to pick
 * for the rest of the program. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hashing/xxh3_avx2.h"

void jitcache_xxh3_128_avx2(const void* data, size_t size, uint64_t* high, uint64_t* low) {
  const XXH128_hash_t hash = XXH3_128bits(data, size);
  *high = hash.high64;
  *low = hash.low64;
}

uint64_t jitcache_xxh3_64_avx2(const void* data, size_t size) { return XXH3_64bits(data, size); }
