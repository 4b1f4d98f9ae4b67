# tl.reduce and tl.associative_scan with combine functions that are not one +, *, max or min: over
# tuples (a value with its index, a linear recurrence) and a non-commutative one
# (tests/lit/frontend/general_combine.test).
import triton
import triton.language as tl


@triton.jit
def _argmax_combine(v1, i1, v2, i2):
    # the larger value; on a tie the smaller index
    take2 = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1)


@triton.jit
def _recurrence(a1, b1, a2, b2):
    # h -> a2 * (a1 * h + b1) + b2: the composition of two affine maps
    return a1 * a2, b1 * a2 + b2


@triton.jit
def _last_nonzero(x, y):
    # associative, not commutative: the right operand unless it is zero
    return tl.where(y != 0, y, x)


@triton.jit
def combine(x_ptr, a_ptr, b_ptr, z_ptr, vmax_ptr, imax_ptr, h_ptr, hr_ptr, last_ptr, col_ptr,
            R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    offs = rows[:, None] * C + cols[None, :]
    x = tl.load(x_ptr + offs)
    idx = tl.broadcast_to(cols[None, :], (R, C))
    vmax, imax = tl.reduce((x, idx), 1, _argmax_combine)
    tl.store(vmax_ptr + rows, vmax)
    tl.store(imax_ptr + rows, imax)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    _, h = tl.associative_scan((a, b), 1, _recurrence)
    tl.store(h_ptr + offs, h)
    _, hr = tl.associative_scan((a, b), 0, _recurrence, reverse=True)
    tl.store(hr_ptr + offs, hr)
    z = tl.load(z_ptr + offs)
    tl.store(last_ptr + offs, tl.associative_scan(z, 1, _last_nonzero))
    tl.store(col_ptr + cols, tl.reduce(z, 0, _last_nonzero))
