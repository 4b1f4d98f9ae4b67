# Pointer GEMMs whose loads carry no mask (every extent a multiple of the block), with B stored N x K
# and read through pointers as a K x N block (a column-major operand: moved by threads, as a tile
# map), and the same with 64-bit offsets, as libraries write them so that large offsets do not wrap.
import triton
import triton.language as tl


@triton.jit
def gemm_bt(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, WIDE: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    if WIDE:
        rn = rn.to(tl.int64)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] + rn[None, :] * K
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def expert_gemm(x_ptr, w_ptr, out_ptr, experts, N, K, stride_e, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                INNER: tl.constexpr = False):
    # Rows block p of out = rows block p of x @ W_e^T, e = experts[p], W stored [E, N, K] (a mixture of
    # experts' projection, its weight offsets in 64 bits: e * stride_e may pass 2^31 in real models).
    # With INNER the expert's offset is summed inside the tile's offsets (it then moves the
    # descriptor's base from within the block's address arithmetic).
    pid_m = tl.program_id(0)
    e = tl.load(experts + pid_m).to(tl.int64)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = (tl.program_id(1) * BN + tl.arange(0, BN)).to(tl.int64)
    rk = tl.arange(0, BK)
    a_ptrs = x_ptr + rm[:, None] * K + rk[None, :]
    if INNER:
        b_ptrs = w_ptr + (rk[:, None] + rn[None, :] * K + e * stride_e)
    else:
        b_ptrs = w_ptr + e * stride_e + rk[:, None] + rn[None, :] * K
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))
