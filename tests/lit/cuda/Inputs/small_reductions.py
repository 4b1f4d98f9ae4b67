# Reductions and scans of f16/bf16 (max, min) and 8- and 16-bit integer tiles on the SIMT path
# (cuda/simt_2d.test): 1-D to a scalar, along either axis of a 2-D tile, an associative scan.
import triton
import triton.language as tl


@triton.jit
def _mx(a, b):
    return tl.maximum(a, b)


@triton.jit
def small_reductions(h_ptr, b_ptr, c_ptr, u_ptr, w_ptr, o_hmax, o_bmin, o_rowmax, o_colmin, o_cummax, o_csum, o_cxor, o_umax, o_wsum,
                     o_arg, n, R: tl.constexpr, C: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    h = tl.load(h_ptr + offs, mask=m, other=float("-inf"))  # f16
    b = tl.load(b_ptr + offs, mask=m, other=float("inf"))  # bf16
    tl.store(o_hmax, tl.max(h))
    tl.store(o_bmin, tl.min(b))
    rows = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    t = tl.load(b_ptr + rows)  # bf16 R x C
    tl.store(o_rowmax + tl.arange(0, R), tl.max(t, axis=1))
    tl.store(o_colmin + tl.arange(0, C), tl.min(t, axis=0))
    tl.store(o_cummax + rows, tl.associative_scan(t, 1, _mx))
    c = tl.load(c_ptr + offs, mask=m, other=0)  # i8
    tl.store(o_csum, tl.sum(c, dtype=tl.int8))
    tl.store(o_cxor, tl.xor_sum(c))
    u = tl.load(u_ptr + offs, mask=m, other=0)  # u8
    tl.store(o_umax, tl.max(u))
    w = tl.load(w_ptr + offs, mask=m, other=0)  # i16
    tl.store(o_wsum, tl.sum(w, dtype=tl.int16))
    tl.store(o_arg, tl.argmax(c, axis=0))
