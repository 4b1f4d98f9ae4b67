# An expert's GEMM in the form of vLLM's and lmdeploy's MoE kernels (cuda/wrapped_offsets.test): N a
# constexpr, the output columns wrapped `(pid_n * BLOCK_N + arange) % N` instead of masked, B
# indexed by expert (a batch offset in i64), C stored at the wrapped columns without a column mask.
import triton
import triton.language as tl


@triton.jit
def expert_gemm(A, B, C, M, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    e = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * K + rk[None, :]
    b_ptrs = B + e.to(tl.int64) * (K * N) + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(C + e.to(tl.int64) * (M * N) + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=rm[:, None] < M)
