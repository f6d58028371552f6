"""Builds and runs N distinct programs one after the other with pyopencl (its own binary cache
off: PYOPENCL_NO_CACHE=1), N = argv[1] (default 6), and prints each result's checksum, so that a
run under jitcache can be compared with a plain run. Many misses in one process: the capture
helpers must not all run beside it.

The programs are kept alive, unless `--release-each` is given: then each kernel and program goes
right after its enqueue, before the queue ran it, and the driver may hand a released program's
handle to the next program (issue 37: such builds went unseen)."""
import sys

import numpy as np
import pyopencl as cl

release_each = "--release-each" in sys.argv[1:]
numbers = [a for a in sys.argv[1:] if not a.startswith("--")]
count = int(numbers[0]) if numbers else 6
context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
flags = cl.mem_flags
x = np.arange(1024, dtype=np.float32)
programs = []  # kept alive unless --release-each: see the note above
for n in range(count):
    source = """
__kernel void scale_%d(__global const float* x, __global float* y) {
  int i = get_global_id(0);
  y[i] = x[i] * %d.0f + %d.0f;
}
""" % (n, n + 2, n)
    program = cl.Program(context, source).build()
    y = np.empty_like(x)
    x_buffer = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
    y_buffer = cl.Buffer(context, flags.WRITE_ONLY, y.nbytes)
    kernel = getattr(program, "scale_%d" % n)
    kernel(queue, x.shape, None, x_buffer, y_buffer)
    if release_each:
        del kernel, program  # before the queue ran it: the driver still holds the kernel
    else:
        programs.append(program)
    cl.enqueue_copy(queue, y, y_buffer)
    assert np.array_equal(y, x * (n + 2) + n)
    print("program %d: %.1f" % (n, float(y.sum())))
