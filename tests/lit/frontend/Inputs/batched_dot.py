import triton
import triton.language as tl


# A batch of products in one tl.dot: [B, M, K] x [B, K, N] + [B, M, N].
@triton.jit
def batched_dot(a, b, bias, c, BB: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rb = tl.arange(0, BB)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(a + rb[:, None, None] * BM * BK + rm[None, :, None] * BK + rk[None, None, :])
    y = tl.load(b + rb[:, None, None] * BK * BN + rk[None, :, None] * BN + rn[None, None, :])
    acc = tl.load(bias + rb[:, None, None] * BM * BN + rm[None, :, None] * BN + rn[None, None, :])
    z = tl.dot(x, y, acc)
    tl.store(c + rb[:, None, None] * BM * BN + rm[None, :, None] * BN + rn[None, None, :], z.to(tl.float16))


@triton.jit
def batched_mismatch(a, b, c, BM: tl.constexpr):
    r = tl.arange(0, BM)
    x = tl.load(a + r[:, None, None] * 256 + r[None, :, None] * 16 + r[None, None, :])
    y = tl.load(b + tl.arange(0, 2 * BM)[:, None, None] * 256 + r[None, :, None] * 16 + r[None, None, :])
    tl.store(c + r[:, None, None] * 256 + r[None, :, None] * 16 + r[None, None, :], tl.dot(x, y))
