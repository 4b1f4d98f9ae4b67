import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def _max_by_where(a, b):
    return tl.where(a > b, a, b)


@triton.jit
def _min_combine(x, y):
    return tl.minimum(x, y)


# Scans and general reductions of one row per program: cumsum (f32 and i8 promoted to i32), cumprod,
# associative_scan with user combine functions (forward and reverse), tl.reduce, argmax / argmin and
# max with return_indices.
@triton.jit
def scans(x_ptr, i_ptr, out_ptr, iout_ptr, stats_ptr, istats_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=m, other=0.0)
    i = tl.load(i_ptr + row * n + offs, mask=m, other=0)
    base = out_ptr + row * 5 * BLOCK
    tl.store(base + offs, tl.cumsum(x, 0), mask=m)
    tl.store(base + BLOCK + offs, tl.cumprod(1.0 + x * 0.01, axis=0), mask=m)
    tl.store(base + 2 * BLOCK + offs, tl.associative_scan(x, 0, _max_by_where), mask=m)
    tl.store(base + 3 * BLOCK + offs, tl.associative_scan(x, 0, _add, reverse=True), mask=m)
    tl.store(base + 4 * BLOCK + offs, x.cumsum(0), mask=m)
    tl.store(iout_ptr + row * BLOCK + offs, tl.cumsum(i, 0), mask=m)
    xm = tl.where(m, x, float("-inf"))
    mx, imx = tl.max(xm, 0, return_indices=True)
    tl.store(stats_ptr + row * 4, mx)
    tl.store(stats_ptr + row * 4 + 1, tl.reduce(x, 0, _add))
    tl.store(stats_ptr + row * 4 + 2, tl.reduce(tl.where(m, x, float("inf")), 0, _min_combine))
    tl.store(stats_ptr + row * 4 + 3, tl.sum(x, 0))
    tl.store(istats_ptr + row * 3, imx)
    tl.store(istats_ptr + row * 3 + 1, tl.argmax(xm, axis=0))
    tl.store(istats_ptr + row * 3 + 2, tl.argmin(tl.where(m, i.to(tl.int32), 1000), axis=0, tie_break_left=False))


# 2-D: scans and arg-reductions along either axis (the executor's).
@triton.jit
def scans_2d(x_ptr, out_ptr, idx_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + r * C + c)
    tl.store(out_ptr + r * C + c, tl.cumsum(x, axis=1))
    tl.store(out_ptr + R * C + r * C + c, tl.cumsum(x, axis=0, reverse=True))
    tl.store(idx_ptr + tl.arange(0, R), tl.argmax(x, axis=1))
    tl.store(idx_ptr + R + tl.arange(0, C), tl.argmin(x, axis=0))
