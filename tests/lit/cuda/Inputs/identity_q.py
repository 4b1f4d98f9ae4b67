import triton
import triton.language as tl


# Attention-like loop over K/V blocks whose Q is first multiplied by an identity made in registers
# (`tl.dot(q, I)`: FlagAttention's piecewise attention moves Q into the MMA layout so):
# o = sum_n (Q @ K_n^T) @ V_n (no softmax: the products themselves), rows of Q in blocks of BM.
@triton.jit
def identity_q(q, k, v, o, M, N, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    cols = tl.arange(0, BN)
    x = tl.load(q + rows[:, None] * D + d[None, :], mask=rows[:, None] < M, other=0.0)
    eye = tl.where(d[:, None] == d[None, :], tl.full((D, D), 1.0, tl.float16), tl.full((D, D), 0.0, tl.float16))
    x = tl.dot(x, eye).to(tl.float16)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for n in range(0, N, BN):
        kb = tl.load(k + (n + cols)[:, None] * D + d[None, :])
        vb = tl.load(v + (n + cols)[:, None] * D + d[None, :])
        s = tl.dot(x, tl.trans(kb))
        acc += tl.dot(s.to(tl.float16), vb)
    tl.store(o + rows[:, None] * D + d[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
