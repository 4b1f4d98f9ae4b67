# A GEMM that also stores the maximum of each output row (a row vector, through a 1-D store), for
# tests/lit/cuda/row_vector_store.test.
import triton
import triton.language as tl


@triton.jit
def gemm_rowmax(a_ptr, b_ptr, c_ptr, rmax_ptr, M, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_d = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_d = tl.make_tensor_descriptor(b_ptr, shape=[K, BN], strides=[BN, 1], block_shape=[BK, BN])
    c_d = tl.make_tensor_descriptor(c_ptr, shape=[M, BN], strides=[BN, 1], block_shape=[BM, BN])
    row0 = tl.program_id(0) * BM
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_d.load([row0, k]), b_d.load([k, 0]), acc)
    c_d.store([row0, 0], acc.to(tl.float16))
    rows = row0 + tl.arange(0, BM)
    tl.store(rmax_ptr + rows, tl.max(acc, axis=1), mask=rows < M)
