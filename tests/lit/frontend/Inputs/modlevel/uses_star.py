import triton
import triton.language as tl

from .helpers_star import *  # noqa: F403


# A helper that only a star import provides; a swizzled tile order; a bitwise reduction; a block
# pointer's element type.
@triton.jit
def _or(a, b):
    return a | b


@triton.jit
def misc(x_ptr, bits_ptr, out_ptr, ij_ptr, ored_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    bp = tl.make_block_ptr(x_ptr, (n,), (1,), (pid * BLOCK,), (BLOCK,), (0,))
    x = tl.load(bp, boundary_check=(0,)).to(bp.dtype.element_ty)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, scale3(x), mask=offs < n)
    i, j = tl.swizzle2d(pid // 4, pid % 4, 3, 4, 2)
    tl.store(ij_ptr + pid * 2, i)
    tl.store(ij_ptr + pid * 2 + 1, j)
    b = tl.load(bits_ptr + pid * BLOCK + tl.arange(0, BLOCK))
    tl.store(ored_ptr + pid, tl.reduce(b, 0, _or))
