/* XXH3 compiled for AVX2 (hashing/xxh3_avx2.c); only hashing/digest.cpp calls these, and only on a
 * CPU that has AVX2. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void jitcache_xxh3_128_avx2(const void* data, size_t size, uint64_t* high, uint64_t* low);
uint64_t jitcache_xxh3_64_avx2(const void* data, size_t size);

#ifdef __cplusplus
}
#endif
