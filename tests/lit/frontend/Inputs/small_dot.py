import triton
import triton.language as tl


# A tl.dot whose M or N is under 16 (GPTQModel's ParoQuant decode GEMM runs block_size_m = 4): Triton
# takes any M and N on NVIDIA targets, K >= 16 (32 for 8-bit operands). C = A @ B + C, one block.
@triton.jit
def small_dot(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :])
    y = tl.load(b + rk[:, None] * BN + rn[None, :])
    p = c + rm[:, None] * BN + rn[None, :]
    tl.store(p, tl.load(p) + tl.dot(x, y))
