import triton
import triton.language as tl


# A GEMM whose K loop counts down (`range(K, 0, -BK)`, as DeepSpeed's `_fp_matmul` writes it) while
# its pointers advance: A's columns, unmasked, are K - k for k = K, K - BK, ..., BK.
@triton.jit
def count_down(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a + rm[:, None] * K + rk[None, :]
    b_ptrs = b + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(K, 0, -BK):
        x = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
        y = tl.load(b_ptrs, mask=rn[None, :] < N, other=0.0)
        acc += tl.dot(x, y)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
