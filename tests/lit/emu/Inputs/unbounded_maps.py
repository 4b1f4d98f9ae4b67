import triton
import triton.language as tl


# Loads without masks: block-access makes their descriptors with unbounded dimensions, whose tensor
# maps reach past the buffers (on the GPU only the boxes read matter).
@triton.jit
def gemm_i8(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        y = tl.load(b + (k0 + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)


# Rows masked, the K dimension not: one bounded and one unbounded dimension per map.
@triton.jit
def gemm_bf16(a, b, c, M, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        y = tl.load(b + (k0 + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.bfloat16), mask=rm[:, None] < M)
