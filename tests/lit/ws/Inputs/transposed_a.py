# GEMMs whose A is stored K x M (M contiguous, as a backward pass reads an activation) and multiplied
# transposed: C = A^T B, and C = A^T B^T with B stored N x K.
import triton
import triton.language as tl


@triton.jit
def at_gemm(a_ptr, b_ptr, c_ptr, M, N, K,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, B_TRANSPOSED: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[K, M], strides=[M, 1], block_shape=[BLOCK_K, BLOCK_M])
    if B_TRANSPOSED:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([k, off_m])
        if B_TRANSPOSED:
            b = b_desc.load([off_n, k]).T
        else:
            b = b_desc.load([k, off_n])
        acc = tl.dot(tl.trans(a), b, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))
