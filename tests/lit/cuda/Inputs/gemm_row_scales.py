# A GEMM scaled per row and per column in the epilogue, written as int8 MoE kernels write it
# (cuda/row_scales.test): the row scales loaded as an Mx1 tile (`s_ptr + rm[:, None]`), the column
# scales as a 1xN one, and both reassigned only in a constexpr branch of the K loop that is not
# taken (the loop then carries them unchanged).
import triton
import triton.language as tl


@triton.jit
def gemm_row_scales(a_ptr, b_ptr, c_ptr, s_ptr, t_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    PER_BLOCK: tl.constexpr):
    rm = (tl.program_id(0) * BM + tl.arange(0, BM)) % M
    rn = (tl.program_id(1) * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    a_scale = tl.load(s_ptr + rm[:, None])
    b_scale = tl.load(t_ptr + rn[None, :])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        if PER_BLOCK:
            a_scale = tl.load(s_ptr + rm[:, None] + k)
            b_scale = tl.load(t_ptr + rn[None, :] + k)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * N
    acc = acc * a_scale * b_scale
    cm = tl.program_id(0) * BM + tl.arange(0, BM)
    cn = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * N + cn[None, :], acc.to(tl.float16), mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def gemm_row_scales_1d(a_ptr, b_ptr, c_ptr, s_ptr, t_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # the row scales loaded 1-D and laid along the rows (bitsandbytes' `tl.load(state_x_ptr + ram)[:, None]`):
    # block-access makes the load a 1-D descriptor load at the block's rows
    rm = (tl.program_id(0) * BM + tl.arange(0, BM)) % M
    rn = (tl.program_id(1) * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    x_factor = tl.load(s_ptr + rm)[:, None]
    w_factor = tl.load(t_ptr + rn)[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * N
    acc = w_factor * (x_factor * acc)
    cm = tl.program_id(0) * BM + tl.arange(0, BM)
    cn = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * N + cn[None, :], acc.to(tl.float16), mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def gemm_f16_scalar_scale(a_ptr, b_ptr, c_ptr, w_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # a scale read as an f16 scalar (bitsandbytes' w_factor = tl.load(state_w_ptr)) and applied in f32
    rm = (tl.program_id(0) * BM + tl.arange(0, BM)) % M
    rn = (tl.program_id(1) * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    w = tl.load(w_ptr)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * N
    acc = w * acc
    cm = tl.program_id(0) * BM + tl.arange(0, BM)
    cn = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * N + cn[None, :], acc.to(tl.float16), mask=(cm[:, None] < M) & (cn[None, :] < N))
