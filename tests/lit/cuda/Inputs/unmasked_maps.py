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


@triton.jit
def gemm_shifted(a_ptr, b_ptr, c_ptr, off_a, off_c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A and C start off_a and off_c elements into their buffers (a view whose base is not a whole number
    # of rows in), every access unmasked and in bounds: the column coordinates run past the row stride.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + off_a + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + off_c + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def sliding_rows(x_ptr, w_ptr, y_ptr, S, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Row m of A is x[m * S : m * S + K] (a 1-D convolution written as a GEMM): rows S apart, S < K,
    # overlap in memory.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptr + rm[:, None] * S + (k0 + rk)[None, :])
        b = tl.load(w_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def gemm_past_k(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Unmasked blocks of a K that is not a multiple of BK: the last K block of each row of A runs into
    # the next row (and B's into the rows after K), which the buffers hold: well defined, if unusual.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :]), tl.load(b_ptr + (k0 + rk)[:, None] * BN + rn[None, :]), acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def overlap_rows(x_ptr, w_ptr, y_ptr, S, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Row m of A is x[m * S : m * S + BK], S < BK: one block of K read from column 0 (no K loop), rows
    # overlapping in memory.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(x_ptr + rm[:, None] * S + rk[None, :])
    w = tl.load(w_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, w))


@triton.jit
def fp8_bt(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # B stored N x K and read K x N, nothing masked: an 8-bit B slot is K-major, loaded through the
    # transposed map, whose columns are K's.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] + rn[None, :] * K)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def store_at_column(a_ptr, b_ptr, c_ptr, K, sc, OFF: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # C written at columns OFF .. OFF + BN - 1 of rows sc apart, unmasked: past the row where sc < OFF + BN.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :]), tl.load(b_ptr + (k0 + rk)[:, None] * BN + rn[None, :]), acc)
    tl.store(c_ptr + rm[:, None] * sc + (OFF + rn)[None, :], acc.to(tl.float16))

