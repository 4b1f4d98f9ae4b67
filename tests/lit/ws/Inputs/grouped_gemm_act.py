# A GEMM in the style of Triton's matrix-multiplication tutorial, written for tawa's tests: grouped
# tile order with tl.cdiv, tl.assume on the derived tile indices, offsets wrapped with `% M`, a K loop
# over tl.cdiv(K, BLOCK_K) with masks on K, and a leaky-ReLU epilogue before the masked store.
import triton
import triton.language as tl


@triton.jit
def leaky(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def gemm_act(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr, ACT: tl.constexpr):
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP * tiles_n
    first = (pid // per_group) * GROUP
    rows_here = min(tiles_m - first, GROUP)
    pid_m = first + ((pid % per_group) % rows_here)
    pid_n = (pid % per_group) // rows_here
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    pa = a_ptr + (rm[:, None] * s_am + rk[None, :] * s_ak)
    pb = b_ptr + (rk[:, None] * s_bk + rn[None, :] * s_bn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(pa, mask=rk[None, :] < K - k * BK, other=0.0)
        y = tl.load(pb, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        pa += BK * s_ak
        pb += BK * s_bk
    if ACT:
        acc = leaky(acc)
    out = acc.to(tl.float16)
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + s_cm * cm[:, None] + s_cn * cn[None, :], out, mask=(cm[:, None] < M) & (cn[None, :] < N))
