# A GEMM whose program id is widened to int64 before the grouped ordering (FlagGems' mm and bmm take
# `tle.program_id`, an int64 program id): pid_m and pid_n are i64 quotients and remainders, the
# offsets wrapped `% M` / `% N` and widened again (cuda/wrapped_offsets.test).
import triton
import triton.language as tl


@triton.jit
def gemm_i64_pid(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    ram = (rm % M).to(tl.int64)
    rbn = (rn % N).to(tl.int64)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(A + ram[:, None] * K + kk[None, :], mask=kk[None, :] < K, other=0.0)
        b = tl.load(B + kk[:, None] * N + rbn[None, :], mask=kk[:, None] < K, other=0.0)
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))
