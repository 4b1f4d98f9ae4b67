# A block-quantized fp8 GEMM in the form DeepSeek-style serving libraries write (cuda/block_fp8.test):
# e4m3 A and B, a scale per row of A and per K block, a scale per group of G columns of B and per K
# block, both loaded in the K loop and applied to each block's product.
import triton
import triton.language as tl


@triton.jit
def block_fp8_gemm(A, B, C, As, Bs, M, N, K, G: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * K + rk[None, :]
    b_ptrs = B + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        a_s = tl.load(As + rm * tl.cdiv(K, G) + (k * BK) // G)
        b_s = tl.load(Bs + ((k * BK) // G) * tl.cdiv(N, G) + rn // G)
        acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        a_ptrs += BK
        b_ptrs += BK * N
    cm = pm * BM + tl.arange(0, BM)
    cn = pn * BN + tl.arange(0, BN)
    tl.store(C + cm[:, None] * N + cn[None, :], acc.to(C.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))
