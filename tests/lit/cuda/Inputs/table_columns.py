import triton
import triton.language as tl


# C[r, j] = sum_k A[r, k] * B[k, t[j]] + t[r] for a block of B rows and columns that read the same
# block of table entries t = table[order[...]] (read through two levels of pointers, widened to
# 64 bits): t lies along the columns of B (gathered columns, B read through pointers: its fill 1.0
# past K is not TMA's zero) and along the rows of C (the form of vLLM's paged prefix-prefill, whose
# block-table entry addresses the columns of K^T and the rows of V).
@triton.jit
def table_columns(a, b, table, order, c, K, N, B: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * B + tl.arange(0, B)
    t = tl.load(table + tl.load(order + rows)).to(tl.int64)
    acc = tl.zeros((B, B), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=ks[None, :] < K, other=0.0)
        y = tl.load(b + ks[:, None] * N + t[None, :], mask=ks[:, None] < K, other=1.0)
        acc = tl.dot(x, y, acc)
    acc += t[:, None].to(tl.float32)
    tl.store(c + rows[:, None] * B + tl.arange(0, B)[None, :], acc)
