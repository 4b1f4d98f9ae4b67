import triton
import triton.language as tl


# A bias row loaded and scaled before the K loop (each block's columns, times alpha), added after it.
@triton.jit
def bias_scaled(a, b, bias, c, M, N, K, alpha, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    scaled = tl.load(bias + rn, mask=rn < N, other=0.0).to(tl.float32) * alpha
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    acc += scaled[None, :]
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


# The K loop starts where a table of block offsets says (the largest of the first 16): the producer
# would need a value computed from a row only the consumer loads.
@triton.jit
def start_from_table(a, b, c, starts, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    first = tl.max(tl.load(starts + tl.arange(0, 16)), axis=0)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(first * BK, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        y = tl.load(b + (k0 + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))
