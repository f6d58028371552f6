"""pyopencl.array maths, reductions, a scan and an ElementwiseKernel: programs pyopencl builds and
never releases before exit. With capture = release their binaries are read at exit, and PoCL then
compiles their work-group code with LLVM (the regression test CaptureAtRelease in
apps_suite_test.cpp). Prints a checksum. Also the pyopencl client of bench/clients.sh (pyopencl
keeps its own binary cache in $XDG_CACHE_HOME/pyopencl; PYOPENCL_NO_CACHE=1 turns it off)."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.scan import InclusiveScanKernel

context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
x = cla.to_device(queue, np.linspace(-3, 3, 1 << 16).astype(np.float32))
y = clmath.sin(x) * 2 + x * x
norm = cla.sum(y * y).get()
dot = cla.dot(x, y).get()
peak = cla.max(y).get()
saxpy = ElementwiseKernel(context, "float a, float *x, float *y, float *z", "z[i] = a * x[i] + y[i]", "saxpy")
z = cla.empty_like(x)
saxpy(2.5, x, y, z)
prefix = InclusiveScanKernel(context, np.int32, "a+b", neutral="0")(cla.to_device(queue, np.arange(1 << 14, dtype=np.int32)))
checks = (float(norm), float(dot), float(peak), float(cla.sum(z).get()), int(prefix[-1].get()))
assert checks[4] == (1 << 14) * ((1 << 14) - 1) // 2
print("pyopencl_array: checksum " + " ".join(f"{v:.4g}" for v in checks))
