# A GEMM whose last K block is peeled off the loop (FlagGems' mm and addmm): the loop takes the whole
# blocks unmasked, a masked tl.dot after it the rest (ws/peeled_tail.test).
import triton
import triton.language as tl


@triton.jit
def peeled_gemm(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    ram = rm % M
    rbn = rn % N
    whole = K // BK * BK
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, whole, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(A + ram[:, None] * K + rk[None, :])
        b = tl.load(B + rk[:, None] * N + rbn[None, :])
        acc += tl.dot(a, b)
    rk = whole + tl.arange(0, BK)
    a = tl.load(A + ram[:, None] * K + rk[None, :], mask=rk[None, :] < K, other=0.0)
    b = tl.load(B + rk[:, None] * N + rbn[None, :], mask=rk[:, None] < K, other=0.0)
    acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))
