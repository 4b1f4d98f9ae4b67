import triton
import triton.language as tl


# An fp8 GEMM whose B the consumers compute: read through pointers with `other` 0.5 past column NB
# (a non-zero fill keeps it a pointer load). wgmma reads 8-bit operands K-major, so each consumer
# stages B transposed from its registers, which hold fp8 elements as their bits (0.5 encoded).
# C = A @ B' with B'[:, n] = B[:, n] for n < NB, 0.5 past it.
@triton.jit
def fp8_computed_b(a, b, c, M, N, K, NB, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        y = tl.load(b + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < NB), other=0.5)
        acc = tl.dot(x, y, acc)
    tl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
