#include "common.h"

__kernel void vector_add(__global const float* a, __global const float* b, __global float* out) {
  size_t i = get_global_id(0);
  out[i] = a[i] + b[i];
}

__kernel void saxpy(float alpha, __global const float* x, __global float* y) {
  size_t i = get_global_id(0);
  y[i] = alpha * x[i] + y[i];
}

// Reports the SCALE it was compiled with, so the host can check the result it gets.
__kernel void transform_all(__global const float* in, __global float* out, __global float* scale_used) {
  size_t i = get_global_id(0);
  if (i == 0) *scale_used = SCALE;
  out[i] = transform(in[i]);
}
