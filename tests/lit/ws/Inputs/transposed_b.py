# GEMMs whose B is stored N x K (K contiguous, as a linear layer's weight is) and multiplied
# transposed, in the three ways Triton spells it: `b.T` in a persistent kernel walking its tiles
# through device-side tensor descriptors (the shape of Triton's persistent-matmul tutorial),
# `tl.trans(b)` and `tl.permute(b, (1, 0))` in one-tile-per-program kernels.
import triton
import triton.language as tl


@triton.jit
def bt_persistent(a_ptr, b_ptr, c_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for t in tl.range(tl.program_id(0), tiles, NUM_SMS, flatten=True):
        off_m = (t // tiles_n) * BLOCK_M
        off_n = (t % tiles_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = a_desc.load([off_m, k])
            b = b_desc.load([off_n, k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([off_m, off_n], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def bt_trans(a_ptr, b_ptr, c_ptr, M, N, K,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PERMUTE: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        b = b_desc.load([off_n, k])
        if PERMUTE:
            bt = tl.permute(b, (1, 0))
        else:
            bt = tl.trans(b)
        acc = tl.dot(a_desc.load([off_m, k]), bt, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))
