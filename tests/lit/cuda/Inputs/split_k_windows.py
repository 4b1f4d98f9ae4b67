import triton
import triton.language as tl


# A split-K GEMM that masks nothing along K or N (Triton's old matmul with EVEN_K, DeepSpeed's
# `_fp_matmul`): program (m, n, z) adds A[m-block, z-th K slices] @ B[.., n-block] into C. A's
# columns are `pid_z * BK + k` over the K loop, B's `pid_n * BN + j`: both move with a program id.
@triton.jit
def split_k_windows(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_z = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = pid_z * BK + tl.arange(0, BK)
    pa = a + rm[:, None] * K + rk[None, :]
    pb = b + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK * SPLIT_K):
        acc += tl.dot(tl.load(pa, mask=rm[:, None] < M, other=0.0), tl.load(pb))
        pa += BK * SPLIT_K
        pb += BK * SPLIT_K * N
    tl.atomic_add(c + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
