import triton
import triton.language as tl


# A SIMT kernel's block is sized by its largest tile (about 32 entries per thread, 128 to 1024
# threads): a 128x128 dot runs on 512 threads. (B's mask, always true but no bound, kept the kernel
# off the warp-specialized path until the consumer could load B through pointers: TAWA_SIMT=1 now.)
@triton.jit
def dot_big(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :])
    y = tl.load(b + rk[:, None] * BN + rn[None, :], mask=(rk[:, None] + rn[None, :]) >= 0, other=0.0)
    tl.store(c + rm[:, None] * BN + rn[None, :], tl.dot(x, y).to(tl.float16))


# Reductions and scans across more than four warps: the per-warp partial results are combined
# pairwise over all of them, in one order for every thread.
@triton.jit
def long_row(x, total, scanned, rscanned, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.store(total, tl.sum(v, axis=0))
    tl.store(scanned + offs, tl.cumsum(v, 0), mask=m)
    tl.store(rscanned + offs, tl.cumsum(v, 0, reverse=True), mask=m)
