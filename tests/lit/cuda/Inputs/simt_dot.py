import triton
import triton.language as tl


# One tl.dot and no loop: nothing for a producer warp group to stream, so no warp-specialized form.
# Masked loads of ragged edges, an accumulator read from memory, and K != N.
@triton.jit
def dot_once(a, b, bias, c, M, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :], mask=rm[:, None] < M, other=0.0)
    y = tl.load(b + rk[:, None] * BN + rn[None, :])
    acc = tl.load(bias + rm[:, None] * BN + rn[None, :], mask=rm[:, None] < M, other=0.0)
    acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.float16), mask=rm[:, None] < M)


@triton.jit
def dot_i8(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :])
    y = tl.load(b + rk[:, None] * BN + rn[None, :])
    tl.store(c + rm[:, None] * BN + rn[None, :], tl.dot(x, y))
