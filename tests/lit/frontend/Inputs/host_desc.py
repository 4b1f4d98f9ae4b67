# Kernels that take host tensor descriptors (Triton's TensorDescriptor arguments), for
# tests/lit/frontend/host_descriptors.test: a block copy, and a GEMM whose B is stored [N, K] (K-major)
# and read transposed, as Triton's persistent-matmul tutorial reads it.
import triton
import triton.language as tl


@triton.jit
def copy_rows(src, dst, BM: tl.constexpr):
    r = tl.program_id(0) * BM
    dst.store([r, 0], src.load([r, 0]))


@triton.jit
def gemm_bt(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    off_m = (pid // tiles_n) * BM
    off_n = (pid % tiles_n) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([off_n, k]).T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def gemm_bt_persistent(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       PROGRAMS: tl.constexpr, BEHIND: tl.constexpr):
    # Persistent over PROGRAMS programs; the epilogue finds its tile from a counter of its own that
    # starts BEHIND steps before the loop and is advanced by one step before use: with BEHIND = 1 it
    # always equals `t`; with 2 it is the previous tile (another tile than the one computed).
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    first = tl.program_id(0)
    t_out = first - BEHIND * PROGRAMS
    for t in tl.range(first, tiles, PROGRAMS, flatten=True):
        row = (t // tiles_n) * BM
        col = (t % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([row, k]), b_desc.load([col, k]).T, acc)
        t_out += PROGRAMS
        c_desc.store([(t_out // tiles_n) * BM, (t_out % tiles_n) * BN], acc.to(tl.float16))
