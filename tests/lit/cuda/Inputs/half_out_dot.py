import triton
import triton.language as tl


# Attention-like products with a 16-bit dot result (DeepSpeed's packed flash attention computes its
# scores with `out_dtype=tl.float16`): o = sum_n f16(Q @ K_n^T) @ V_n, rows of Q in blocks of BM.
@triton.jit
def half_out_dot(q, k, v, o, M, N, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    cols = tl.arange(0, BN)
    x = tl.load(q + rows[:, None] * D + d[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for n in range(0, N, BN):
        kb = tl.load(k + (n + cols)[:, None] * D + d[None, :])
        vb = tl.load(v + (n + cols)[:, None] * D + d[None, :])
        s = tl.dot(x, tl.trans(kb), out_dtype=tl.float16)
        acc += tl.dot(s, vb)
    tl.store(o + rows[:, None] * D + d[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
