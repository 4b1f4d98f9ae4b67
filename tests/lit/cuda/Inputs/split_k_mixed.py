# A GEMM split along K at a runtime point, two loops over tiles of the same shapes:
# lo = A[:, :split] @ B[:split, :] with B stored K x N, and hi = A[:, split:K] @ Bt[:, split:K]^T with
# the other part stored N x K (read as K x N tiles: column-major, an inner stride of K, which TMA
# cannot take). The two loops share one ring; its phases are filled by TMA in the first loop and
# partly by the producer's threads in the second.
import triton
import triton.language as tl


@triton.jit
def split_k(a, b, bt, lo, hi, M, N, K, split, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    out = rows[:, None] * N + cols[None, :]
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, split, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < split), other=0.0)
        y = tl.load(b + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < split) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(lo + out, acc, mask=inside)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(split, K, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        y = tl.load(bt + ks[:, None] + cols[None, :] * K, mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(hi + out, acc, mask=inside)
