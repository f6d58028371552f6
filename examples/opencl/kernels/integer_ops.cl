#ifndef OFFSET
#define OFFSET 0
#endif

// Reports the OFFSET it was compiled with (-DOFFSET=n), so the host can check the result.
__kernel void square_plus_offset(__global const int* in, __global int* out, __global int* offset_used) {
  size_t i = get_global_id(0);
  if (i == 0) *offset_used = OFFSET;
  out[i] = in[i] * in[i] + OFFSET;
}
