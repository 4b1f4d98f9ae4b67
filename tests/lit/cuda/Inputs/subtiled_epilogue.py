# A GEMM whose epilogue stores the accumulator in column subtiles, as Triton's persistent-matmul
# tutorial writes it (EPILOGUE_SUBTILE): reshape to [BM, 2, BN/2], permute, split; SPLIT = 4 splits
# each half again. B is given as N x K and used transposed; the halves are scaled differently so a
# store of the wrong half shows.
import triton
import triton.language as tl


@triton.jit
def gemm_subtiled(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN // SPLIT])
    row = tl.program_id(0) * BM
    col = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([row, k]), b_desc.load([col, k]).T, acc)
    lo, hi = tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1)).split()
    if SPLIT == 2:
        c_desc.store([row, col], lo.to(tl.float16))
        c_desc.store([row, col + BN // 2], (hi * 2.0).to(tl.float16))
    else:
        q0, q1 = tl.split(tl.permute(tl.reshape(lo, (BM, 2, BN // 4)), (0, 2, 1)))
        q2, q3 = tl.split(tl.permute(tl.reshape(hi * 2.0, (BM, 2, BN // 4)), (0, 2, 1)))
        c_desc.store([row, col], q0.to(tl.float16))
        c_desc.store([row, col + BN // 4], q1.to(tl.float16))
        c_desc.store([row, col + BN // 2], q2.to(tl.float16))
        c_desc.store([row, col + 3 * BN // 4], q3.to(tl.float16))
