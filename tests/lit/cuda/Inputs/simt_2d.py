# A kernel with 2-D tiles and no tl.dot (tests/lit/cuda/simt_2d.test): row softmax (reductions along
# axis 1 broadcast back), column sums (axis 0), a cumulative sum along the rows and a transpose, all on
# the SIMT path, which moves a tile between threads through shared memory to change its layout.
import triton
import triton.language as tl


@triton.jit
def rows2d(x, y, colsum, cum, t, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x + rm[:, None] * N + rn[None, :], mask=m, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=1)[:, None])
    p = e / tl.sum(e, axis=1)[:, None]
    tl.store(y + rm[:, None] * N + rn[None, :], p, mask=m)
    tl.store(colsum + tl.program_id(0) * BN + rn, tl.sum(tl.where(m, p, 0.0), axis=0), mask=rn < N)
    tl.store(cum + rm[:, None] * N + rn[None, :], tl.cumsum(tl.where(m, p, 0.0), axis=1), mask=m)
    tl.store(t + rn[:, None] * M + rm[None, :], tl.trans(p), mask=(rn[:, None] < N) & (rm[None, :] < M))
