"""tawa from Python: launch plain Triton kernels on the CPU executor or the emulator of their
warp-specialized CUDA form, and read every stage tawa makes of them.

    import numpy as np
    import tawa
    import tawa.language as tl

    @tawa.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

    x, y = np.random.rand(1000).astype(np.float32), np.random.rand(1000).astype(np.float32)
    out = np.empty_like(x)
    k = add[(tawa.cdiv(1000, 256),)](x, y, out, 1000, BLOCK=256)   # backend="emu" for the CUDA kernel
    print(k.cuda)                                                    # the CUDA C++ tawa emitted

An existing ``triton.jit`` kernel (also an autotuned one) launches the same way after ``tawa.wrap``.
Errors raise ``tawa.TawaError`` carrying the file:line:col of the kernel source they concern.
"""

import os as _os

from . import _tawa
from .errors import TawaError
from .jit import ArgumentError, CompiledKernel, JITFunction, PointerArray, TensorDescriptor, jit, load, pointer_array, wrap
from .profiler import profile
from .autotune import Autotuner, Config, autotune
from .torch_library import custom_op

__version__ = _tawa.version()

# The emulator and the CUDA compiler read primitives.cuh (and the emulator's headers beside it)
# from the copy installed with this package.
_include = _os.path.join(_os.path.dirname(__file__), "include", "cuda")
if _os.path.isfile(_os.path.join(_include, "primitives.cuh")):
    _tawa.set_primitives_dir(_include)


def cdiv(a, b):
    """Ceiling division, as triton.cdiv."""
    return -(-a // b)


def check(kernel, grid, *args, seeds=8, **kwargs):
    """``kernel.check(grid, *args, ...)``: the pipeline checked for deadlocks and races on these
    arguments (see JITFunction.check)."""
    return kernel.check(grid, *args, seeds=seeds, **kwargs)


def kernels(path):
    """The names of the @triton.jit / @tawa.jit functions in a Python file."""
    return _tawa.kernels(path)


__all__ = ["ArgumentError", "Autotuner", "Config", "autotune", "CompiledKernel", "JITFunction", "PointerArray", "TawaError", "TensorDescriptor", "cdiv", "check", "custom_op", "jit", "kernels", "load", "pointer_array", "profile", "wrap"]
