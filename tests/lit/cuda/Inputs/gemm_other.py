# A GEMM whose 1-D loads fill their outside with a constant other than zero: a per-column scale read
# in the K loop (columns at or past NS scale by 2) and a bias read in the epilogue (columns at or
# past NB add 0.5). C = sum_k (A_k @ B_k) * s + bias.
import triton
import triton.language as tl


@triton.jit
def gemm_other(a, b, scale, bias, c, M, N, K, NS, NB, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        y = tl.load(b + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        s = tl.load(scale + cols, mask=cols < NS, other=2.0)
        acc += tl.dot(x, y) * s[None, :]
    acc += tl.load(bias + cols, mask=cols < NB, other=0.5)[None, :]
    tl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
