import triton
import triton.language as tl


# A GEMM written with block pointers, as the block-pointer tutorials write it: loads and the store
# checked at the matrix edges, the A and B pointers advanced through the K loop.
@triton.jit
def matmul_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak), offsets=(pid_m * BLOCK_M, 0),
                             block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_bp = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn), offsets=(0, pid_n * BLOCK_N),
                             block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_bp, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc += tl.dot(a, b)
        a_bp = tl.advance(a_bp, (0, BLOCK_K))
        b_bp = tl.advance(b_bp, (BLOCK_K, 0))
    c_bp = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                             block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


# Rows through a 1-D block pointer: only dimension 0 exists; the tail is padded with NaN and
# replaced, and the pointer walks the row.
@triton.jit
def row_sum_block_ptr(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    bp = tl.make_block_ptr(x_ptr + row * stride, shape=(n,), strides=(1,), offsets=(0,), block_shape=(BLOCK,), order=(0,))
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, n, BLOCK):
        x = tl.load(bp, boundary_check=(0,), padding_option="nan")
        acc += tl.where(x == x, x, 0.0)
        bp = tl.advance(bp, (BLOCK,))
    tl.store(out_ptr + row, tl.sum(acc, 0))


# The same GEMM with its row tiles shifted up by SHIFT rows: the first tile starts above row 0, where
# boundary_check pads A's rows with zeros and clips C's (the descriptor does, from below as above).
@triton.jit
def matmul_shifted(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SHIFT: tl.constexpr):
    row = tl.program_id(0) * BLOCK_M - SHIFT
    col = tl.program_id(1) * BLOCK_N
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (stride_am, 1), (row, 0), (BLOCK_M, BLOCK_K), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, 1), (0, col), (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_bp, boundary_check=(0, 1)), tl.load(b_bp, boundary_check=(0, 1)), acc)
        a_bp = tl.advance(a_bp, (0, BLOCK_K))
        b_bp = tl.advance(b_bp, (BLOCK_K, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, 1), (row, col), (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))
