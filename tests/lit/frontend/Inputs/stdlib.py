# Functions of triton.language's standard library (tests/lit/frontend/stdlib.test): tl.softmax,
# tl.xor_sum, tl.reduce_or, tl.ravel, tl.interleave, tl.cat, tl.mul / tl.sub / tl.add, tl.gather, tl.topk.
import triton
import triton.language as tl


@triton.jit
def stdlib(x_ptr, k_ptr, sm_ptr, xs_ptr, ro_ptr, rv_ptr, il_ptr, cat_ptr, ar_ptr, g_ptr, tk_ptr,
           R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    offs = rows[:, None] * C + cols[None, :]
    x = tl.load(x_ptr + offs)
    k = tl.load(k_ptr + offs)
    tl.store(sm_ptr + offs, tl.softmax(x, 0))
    tl.store(xs_ptr + cols, tl.xor_sum(k, 0))
    tl.store(ro_ptr + rows, tl.reduce_or(k, 1))
    tl.store(rv_ptr + tl.arange(0, R * C), tl.ravel(x) * 2.0)
    a = tl.load(x_ptr + cols)
    b = tl.load(x_ptr + C + cols)
    tl.store(il_ptr + tl.arange(0, 2 * C), tl.interleave(a, b))
    tl.store(cat_ptr + tl.arange(0, 2 * C), tl.cat(a, b, can_reorder=True))
    tl.store(ar_ptr + offs, tl.add(tl.mul(k, 3), tl.sub(k, 1, sanitize_overflow=False)))
    tl.store(g_ptr + offs, tl.gather(x, k % C, 1))
    tl.store(tk_ptr + rows[:, None] * 4 + tl.arange(0, 4)[None, :], tl.topk(x, 4))
