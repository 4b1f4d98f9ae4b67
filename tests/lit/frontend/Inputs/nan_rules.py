# The NaN rules of max and min (tests/lit/frontend/nan_rules.test), as Triton 3.6's: tl.maximum and
# tl.minimum default to PropagateNan.NONE (a NaN operand yields the other: IEEE maxNum), ALL yields
# NaN; either orders -0 below +0; tl.max / tl.min reduce with the default; flip keeps NaN elements where they belong.
import triton
import triton.language as tl


@triton.jit
def _where_max(a, b):
    return tl.where(a > b, a, b)


@triton.jit
def nan_rules(x_ptr, y_ptr, mx_ptr, mxa_ptr, mn_ptr, mna_ptr, rmax_ptr, rmin_ptr, fl_ptr, wm_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    offs = rows[:, None] * C + cols[None, :]
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(mx_ptr + offs, tl.maximum(x, y))
    tl.store(mxa_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(mn_ptr + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.NONE))
    tl.store(mna_ptr + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(rmax_ptr + rows, tl.max(x, 1))
    tl.store(rmin_ptr + rows, tl.min(x, 1))
    tl.store(fl_ptr + offs, tl.flip(x, 1))
    tl.store(wm_ptr + rows, tl.reduce(x, 1, _where_max))
