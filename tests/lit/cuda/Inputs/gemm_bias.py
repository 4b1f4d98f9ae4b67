# GEMM epilogues that read another tensor, as linear layers write them: a bias per output column
# added to the f32 accumulator, and a scale per output row. The vectors are masked pointer loads;
# tawa makes them 1-D descriptor loads, which the consumer reads from global memory where its
# accumulator fragment uses them.
import triton
import triton.language as tl


@triton.jit
def _tile_product(a_ptr, b_ptr, M, N, K, off_m, off_n,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([k, off_n]), acc)
    return acc


@triton.jit
def gemm_bias(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = _tile_product(a_ptr, b_ptr, M, N, K, off_m, off_n, BLOCK_M, BLOCK_N, BLOCK_K)
    cols = off_n + tl.arange(0, BLOCK_N)
    bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0)
    acc = acc + bias[None, :].to(tl.float32)
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def gemm_row_scale(a_ptr, b_ptr, scale_ptr, c_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = _tile_product(a_ptr, b_ptr, M, N, K, off_m, off_n, BLOCK_M, BLOCK_N, BLOCK_K)
    rows = off_m + tl.arange(0, BLOCK_M)
    scale = tl.load(scale_ptr + rows, mask=rows < M, other=0.0)
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    c_desc.store([off_m, off_n], (acc * scale[:, None]).to(tl.float16))
