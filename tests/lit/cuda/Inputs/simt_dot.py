import triton
import triton.language as tl


# One tl.dot whose B is loaded under a mask that is not a bound on its rows or columns (here always
# true): no tensor descriptor takes that load, so the warp-specialized path stops at its tile of
# pointers. Masked loads of ragged edges, an accumulator read from memory, and K != N.
@triton.jit
def dot_once(a, b, bias, c, M, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :], mask=rm[:, None] < M, other=0.0)
    y = tl.load(b + rk[:, None] * BN + rn[None, :], mask=(rk[:, None] + rn[None, :]) >= 0, other=0.0)
    acc = tl.load(bias + rm[:, None] * BN + rn[None, :], mask=rm[:, None] < M, other=0.0)
    acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.float16), mask=rm[:, None] < M)


# The dot stored as it comes out: i8 operands (i32 sums), f32 ones (tf32 or ieee, as PREC says); B
# under dot_once's always-true mask, so that the i8 dot stays on the SIMT path too.
@triton.jit
def dot_stored(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr = "tf32"):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :])
    y = tl.load(b + rk[:, None] * BN + rn[None, :], mask=(rk[:, None] + rn[None, :]) >= 0, other=0)
    tl.store(c + rm[:, None] * BN + rn[None, :], tl.dot(x, y, input_precision=PREC))



# Rows gathered through an index tile (a mixture-of-experts projection): no tensor descriptor can
# load them, so the warp-specialized path stops at the tile of pointers; the SIMT path takes it.
@triton.jit
def gemm_gather(x_base, rows_of, w_base, out_base, R, K, N, BR: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    live = r < R
    src = tl.load(rows_of + r, mask=live, other=0)
    cols = tl.arange(0, BN)
    ks = tl.arange(0, BK)
    total = tl.zeros((BR, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(x_base + src[:, None] * K + (k0 + ks)[None, :], mask=live[:, None], other=0.0)
        w = tl.load(w_base + (k0 + ks)[:, None] * N + cols[None, :])
        total = tl.dot(x, w, total)
    tl.store(out_base + r[:, None] * N + cols[None, :], total.to(tl.float16), mask=live[:, None])



# f32 operands (tf32 by default) summed over a K loop into an accumulator that starts from memory:
# the accumulator carried from one iteration to the next (mma.sync for tf32, the FMA loops for ieee).
@triton.jit
def dot_acc_f32(a, b, bias, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr = "tf32"):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.load(bias + rm[:, None] * BN + rn[None, :])
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        y = tl.load(b + (k0 + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(x, y, acc, input_precision=PREC)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)
