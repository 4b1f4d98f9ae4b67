# A GEMM whose epilogue writes NaN and infinities into its f16 and bf16 outputs (cuda/epilogue_math).
import triton
import triton.language as tl

@triton.jit
def k(a, b, c, d, M, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    ad = tl.make_tensor_descriptor(a, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    bd = tl.make_tensor_descriptor(b, shape=[K, BN], strides=[BN, 1], block_shape=[BK, BN])
    cd = tl.make_tensor_descriptor(c, shape=[M, BN], strides=[BN, 1], block_shape=[BM, BN])
    dd = tl.make_tensor_descriptor(d, shape=[M, BN], strides=[BN, 1], block_shape=[BM, BN])
    r = tl.program_id(0) * BM
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kk in range(0, K, BK):
        acc = tl.dot(ad.load([r, kk]), bd.load([kk, 0]), acc)
    cd.store([r, 0], tl.where(acc > 1.0, float("nan"), acc).to(tl.float16))
    h = tl.where(acc < -1.0, float("-inf"), acc).to(tl.bfloat16)
    dd.store([r, 0], tl.where(acc > 2.0, float("inf"), h))
