import triton
import triton.language as tl


# A persistent loop whose epilogue writes the B block its program's next tile reads: in program order
# tile t + S (S programs) multiplies by the ones tile t wrote. A producer running ahead would load the
# next tile's B before the write; warp specialization is refused and the SIMT path keeps the order.
@triton.jit
def chained_tiles(a, b, c, M, K: tl.constexpr, S: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tiles = tl.cdiv(M, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    kk = tl.arange(0, K)
    for t in range(tl.program_id(0), tiles, S):
        rm = t * BM + tl.arange(0, BM)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
            y = tl.load(b + t * K * BN + (k + rk)[:, None] * BN + rn[None, :])
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * BN + rn[None, :], acc, mask=rm[:, None] < M)
        tl.store(b + (t + S) * K * BN + kk[:, None] * BN + rn[None, :], tl.full((K, BN), 1.0, dtype=tl.float16))
