# GEMMs whose B the block analysis cannot make a TMA load (written here): its mask bounds the flat
# offset (`off < LIMIT`), which no box of rows and columns can say. B stays a load through pointers
# in the consumers, staged for wgmma. C = A @ B, B's elements past LIMIT zero; `_nk` stores B as
# N x K and transposes it (`tl.trans`).
import triton
import triton.language as tl


@triton.jit
def gemm_ptrb(a, b, c, M, N, K, LIMIT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        off = ks[:, None] * N + rn[None, :]
        y = tl.load(b + off, mask=(off < LIMIT) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def gemm_ptrb_nk(a, b, c, M, N, K, LIMIT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        off = rn[:, None] * K + ks[None, :]
        y = tl.load(b + off, mask=(off < LIMIT) & (rn[:, None] < N), other=0.0)
        acc = tl.dot(x, tl.trans(y), acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


# B overwritten with 3 after its load (the tile's values only make the dot's B): the dot must see the
# loaded values, so B is read into registers at its load, not where it is staged. C = A @ B (B as
# loaded).
@triton.jit
def gemm_ptrb_inplace(a, b, c, M, N, K, LIMIT, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        off = ks[:, None] * N + rn[None, :]
        y = tl.load(b + off, mask=(off < LIMIT) & (rn[None, :] < N), other=0.0)
        tl.store(b + off, tl.full((BK, BN), 3.0, tl.float16), mask=(off < LIMIT) & (rn[None, :] < N))
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))
