# Functions of triton.language's standard library (tests/lit/frontend/stdlib.test): tl.softmax,
# tl.xor_sum, tl.reduce_or, tl.ravel, tl.interleave, tl.cat, tl.mul / tl.sub / tl.add, tl.gather, tl.topk.
import triton
import triton.language as tl


@triton.jit
def _sq_capped(v, cap):
    return tl.minimum(v * v, cap)


@triton.jit
def stdlib(x_ptr, k_ptr, sm_ptr, xs_ptr, ro_ptr, rv_ptr, il_ptr, cat_ptr, ar_ptr, g_ptr, tk_ptr, me_ptr,
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
    tl.store(me_ptr + offs, tl.map_elementwise(_sq_capped, x, 4.0))


@triton.jit
def descfn(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    # the function forms of desc.load / desc.store
    d = tl.make_tensor_descriptor(x_ptr, [R, C], [C, 1], [R, C])
    e = tl.make_tensor_descriptor(y_ptr, [R, C], [C, 1], [R, C])
    tl.store_tensor_descriptor(e, [0, 0], tl.load_tensor_descriptor(d, [0, 0]) * 3.0)
