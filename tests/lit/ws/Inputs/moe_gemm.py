# A mixture-of-experts GEMM in the form of vLLM's, lmdeploy's and sglang's fused_moe kernels
# (ws/moe_split.test): the block's rows of A gathered through sorted token ids (one expert per
# program along axis 1), the expert's B, the result scattered to the output rows those ids name,
# rows past the expert's count masked. Written here for the test.
import triton
import triton.language as tl


@triton.jit
def moe_gemm(A, B, C, Ids, Starts, N: tl.constexpr, K: tl.constexpr, TOP_K: tl.constexpr,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    e = tl.program_id(2)
    start = tl.load(Starts + e)
    count = tl.load(Starts + e + 1) - start
    if pid_m * BM >= count:
        return
    offs = start + pid_m * BM + tl.arange(0, BM)
    valid = offs < start + count
    ids = tl.load(Ids + offs, mask=valid, other=0)
    rows = ids // TOP_K
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = A + rows[:, None] * K + rk[None, :]
    b_ptrs = B + e.to(tl.int64) * (K * N) + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=valid[:, None] & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(C + ids[:, None] * N + rn[None, :], acc.to(C.dtype.element_ty), mask=valid[:, None])


@triton.jit
def moe_gemm_padded(A, B, C, W, SortedIds, ExpertOf, num_valid, N, K: tl.constexpr, TOP_K: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # vLLM's layout: token slots sorted by expert and padded to BM per expert (padding holds
    # num_valid), one expert per block of BM slots, i64 offsets, the router's weight applied in
    # the epilogue, N wrapped and masked at the store.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_id = pid_m * BM + tl.arange(0, BM).to(tl.int64)
    tokens = tl.load(SortedIds + offs_id).to(tl.int64)
    token_mask = tokens < num_valid
    e = tl.load(ExpertOf + pid_m).to(tl.int64)
    offs_bn = (pid_n * BN + tl.arange(0, BN).to(tl.int64)) % N
    rk = tl.arange(0, BK)
    a_ptrs = A + (tokens[:, None] // TOP_K * K + rk[None, :])
    b_ptrs = B + e * K * N + (rk[:, None] * N + offs_bn[None, :])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * N
    w = tl.load(W + tokens, mask=token_mask, other=0)
    acc = acc * w[:, None]
    offs_cn = pid_n * BN + tl.arange(0, BN)
    tl.store(C + tokens[:, None] * N + offs_cn[None, :], acc.to(C.dtype.element_ty), mask=token_mask[:, None] & (offs_cn[None, :] < N))
