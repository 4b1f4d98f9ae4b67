# Split-K GEMM: each program multiplies one K slice of its tile and adds it into C with tl.atomic_add
# (block-access makes the adds a reduce-add block store: TMA's cp.reduce.async.bulk.tensor). ACC is the
# accumulator's type: f32 for f16 operands, i32 for int8 ones (added into an i32 C).
import triton
import triton.language as tl

@triton.jit
def splitk(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr,
           ACC: tl.constexpr = tl.float32):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak, mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn, mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
        acc += tl.dot(a, b)
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.atomic_add(c, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))



# Sums of A B over the program's block, added into S with tl.atomic_add: AXIS=1 each row's sum over the
# block's columns (a row vector of the accumulator, whose adds the first thread of each quad makes);
# AXIS=0 each column's sum over the block's rows plus SHIFT per row (a bias on the accumulator), as a
# bias gradient is. STORE=True stores the column sums instead (a column vector in registers: not
# emitted, the SIMT fallback).
@triton.jit
def gemm_sums(a_ptr, b_ptr, s_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              AXIS: tl.constexpr = 1, SHIFT: tl.constexpr = 0.0, STORE: tl.constexpr = False):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    if AXIS == 1:
        tl.atomic_add(s_ptr + rm, tl.sum(acc, axis=1), mask=rm < M)
    elif STORE:
        tl.store(s_ptr + rn, tl.sum(acc + SHIFT, axis=0), mask=rn < N)
    else:
        tl.atomic_add(s_ptr + rn, tl.sum(acc + SHIFT, axis=0), mask=rn < N)


# Two relaxed atomic adds, into C (split-K) and into S (row sums): both become reduce-add stores, the
# other being as quiet (an add whose old values are unused, into a buffer nothing else touches).
@triton.jit
def two_adds(a_ptr, b_ptr, c_ptr, s_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
             SPLIT_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N), sem="relaxed")
    tl.atomic_add(s_ptr + rm, tl.sum(acc, axis=1), mask=rm < M, sem="relaxed")
