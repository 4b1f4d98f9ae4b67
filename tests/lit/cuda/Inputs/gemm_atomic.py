import triton
import triton.language as tl


# Split-K: program (m, n, s) sums its share of K and adds its partial C into memory atomically (f16
# and bf16 partials stay pointer atomics: TMA's reduce-add takes f32 and s32 blocks).
@triton.jit
def splitk_add(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr,
               DT: tl.constexpr = tl.float16, SEM: tl.constexpr = "relaxed"):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(tl.program_id(2) * BK, K, BK * SPLIT):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.atomic_add(c + rm[:, None] * N + rn[None, :], acc.to(DT), mask=(rm[:, None] < M) & (rn[None, :] < N), sem=SEM)


# The old values of a tile atomic are not emitted in a warp-specialized kernel (the SIMT path runs it).
@triton.jit
def splitk_old(a, b, c, old, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, y, acc)
    prev = tl.atomic_add(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))
    tl.store(old + rm[:, None] * N + rn[None, :], prev)
