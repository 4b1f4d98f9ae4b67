import triton
import triton.language as tl


# A block-scaled GEMM whose column scales are read through a tile of pointers the K loop advances
# (`s_ptrs += 1`, the form of torchao's blockwise fp8 GEMM): C = sum_k (A_k @ B_k) * sa_k[:, None] * sb_k[None, :].
@triton.jit
def carried_scale_ptrs(a, b, sa, sb, c, M, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    nk = tl.cdiv(K, BK)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_ptrs = a + (rows % M)[:, None] * K + ks[None, :]
    b_ptrs = b + cols[None, :] * K + ks[:, None]
    sa_ptrs = sa + (rows % M) * nk
    sb_ptrs = sb + (cols // BK) * nk
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(nk):
        x = tl.load(a_ptrs, mask=ks[None, :] < K - i * BK, other=0.0)
        y = tl.load(b_ptrs, mask=ks[:, None] < K - i * BK, other=0.0)
        acc += tl.dot(x, y) * tl.load(sa_ptrs)[:, None] * tl.load(sb_ptrs)[None, :]
        a_ptrs += BK
        b_ptrs += BK
        sa_ptrs += 1
        sb_ptrs += 1
    tl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
