import operator
import os

import triton
import triton.language as tl
import triton.language.extra.libdevice as tldevice

# A name bound in two module-level branches, as libraries choose fast or portable functions: the
# first binding tawa (and Triton 3.6) provides is taken. fast_expf is not one tawa has; tl.exp is.
if os.environ.get('FAST_OPS', '0') == '1':
    exp = tldevice.fast_expf
else:
    exp = tl.exp

# A version switch: libdevice's tanh under Triton >= 3 (taken), tl.math's in the else (Triton 3.6's
# tl.math has no tanh).
try:
    from triton.language.extra.libdevice import tanh
except ModuleNotFoundError:
    from triton.language.extra.cuda.libdevice import tanh
if False:
    from triton.language.math import tanh


def compare_version(package, op, version):  # as libraries write it (run by Python, read by tawa)
    import importlib.metadata
    return op(tuple(map(int, importlib.metadata.version(package).split(".")[:2])), tuple(map(int, version.split(".")[:2])))


# A version check of Triton (3.6 here): the else branch is taken, though the first binding exists too.
if compare_version("triton", operator.lt, "3.0.0"):
    log2 = tl.log
else:
    log2 = tl.log2


def _plain(x):
    return x * 2.0


# The call forms of the decorators.
_twice = triton.jit(_plain)


def act_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, _twice(exp(x) + tanh(x) + log2(x * x + 1.0)), mask=m)


act_kernel = triton.jit(act_kernel)
act_kernel = triton.heuristics({"BLOCK": lambda args: 256})(act_kernel)
