"""Builds two kernels with pyopencl (its own binary cache off: PYOPENCL_NO_CACHE=1) and prints
their results, so a run under jitcache can be compared with a plain run."""
import numpy as np
import pyopencl as cl

SOURCE_A = """
__kernel void polynomial(__global const float* x, __global float* y) {
  int i = get_global_id(0);
  y[i] = 3.0f * x[i] * x[i] - 2.0f * x[i] + 1.0f;
}
"""
SOURCE_B = """
__kernel void reverse_xor(__global const uint* in, __global uint* out, uint mask) {
  int i = get_global_id(0);
  out[get_global_size(0) - 1 - i] = in[i] ^ mask;
}
"""

context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
flags = cl.mem_flags

x = np.linspace(-4, 4, 1000, dtype=np.float32)
y = np.empty_like(x)
program_a = cl.Program(context, SOURCE_A).build(options=["-cl-mad-enable"])
x_buffer = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
y_buffer = cl.Buffer(context, flags.WRITE_ONLY, y.nbytes)
program_a.polynomial(queue, x.shape, None, x_buffer, y_buffer)
cl.enqueue_copy(queue, y, y_buffer)

values = np.arange(4096, dtype=np.uint32)
reversed_values = np.empty_like(values)
program_b = cl.Program(context, SOURCE_B).build()
in_buffer = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=values)
out_buffer = cl.Buffer(context, flags.WRITE_ONLY, values.nbytes)
program_b.reverse_xor(queue, values.shape, None, in_buffer, out_buffer, np.uint32(0x5A5A))
cl.enqueue_copy(queue, reversed_values, out_buffer)

assert np.allclose(y, 3 * x * x - 2 * x + 1, rtol=1e-5, atol=1e-4)
assert np.array_equal(reversed_values, (values ^ 0x5A5A)[::-1])
print("polynomial sum=%.4f" % float(np.sum(y, dtype=np.float64)))
print("reverse_xor checksum=%d" % int(np.sum(reversed_values.astype(np.uint64) * np.arange(4096, dtype=np.uint64))))
print("all results correct")
