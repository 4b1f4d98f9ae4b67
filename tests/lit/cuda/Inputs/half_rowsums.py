import triton
import triton.language as tl


# Row sums and maxima of a GEMM tile rounded to 16 bits (FlagAttention's paged attention sums its
# probabilities after `p.to(q.dtype)`): s = sum_j f16(A @ B)[i, j], m = max_j bf16(A @ B)[i, j].
@triton.jit
def half_rowsums(a, b, s, m, M, K, N: tl.constexpr, BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, N)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, N), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rows[:, None] * K + (k + ks)[None, :], mask=rows[:, None] < M, other=0.0)
        y = tl.load(b + (k + ks)[:, None] * N + cols[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(s + rows, tl.sum(acc.to(tl.float16), 1), mask=rows < M)
    tl.store(m + rows, tl.max(acc.to(tl.bfloat16), 1), mask=rows < M)
