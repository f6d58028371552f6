"""A small pyopencl workload for the apps suite: two hand-written kernels, pyopencl.array
arithmetic, clmath functions and a reduction, each a program pyopencl builds from source (its own
binary cache off: PYOPENCL_NO_CACHE=1). Prints results rounded so runs can be compared."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array
import pyopencl.clmath as clmath

SOURCE = """
__kernel void saxpy(float a, __global const float* x, __global float* y) {
  int i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
__kernel void collatz_steps(__global const uint* start, __global uint* steps) {
  int i = get_global_id(0);
  uint n = start[i], s = 0;
  while (n != 1 && s < 1000) { n = (n & 1) ? 3 * n + 1 : n / 2; ++s; }
  steps[i] = s;
}
"""

context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
program = cl.Program(context, SOURCE).build()

x = cl_array.to_device(queue, np.linspace(0, 1, 2048, dtype=np.float32))
y = cl_array.to_device(queue, np.ones(2048, dtype=np.float32))
program.saxpy(queue, x.shape, None, np.float32(2.5), x.data, y.data)
starts = cl_array.to_device(queue, np.arange(1, 1025, dtype=np.uint32))
steps = cl_array.empty_like(starts)
program.collatz_steps(queue, starts.shape, None, starts.data, steps.data)

z = (x * 3 + y) / 2 - x * x
s = clmath.sin(x) + clmath.exp(x) + clmath.sqrt(y)
total = cl_array.sum(z).get()
dot = cl_array.dot(x, y).get()

print("saxpy sum=%.3f" % float(np.sum(y.get(), dtype=np.float64)))
print("collatz max=%d sum=%d" % (int(steps.get().max()), int(steps.get().sum())))
print("elementwise sum=%.3f" % float(total))
print("clmath sum=%.3f" % float(np.sum(s.get(), dtype=np.float64)))
print("dot=%.3f" % float(dot))
print("all results correct")
