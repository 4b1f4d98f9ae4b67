# GEMM epilogues that read another tile: C = A @ B^T + R, R an M x N residual read in the epilogue
# (descriptor form and pointer form), and a bias tile scaled before it is added.
import triton
import triton.language as tl


@triton.jit
def residual_desc(a_ptr, b_ptr, r_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    r_desc = tl.make_tensor_descriptor(r_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([pid_m * BM, k * BK]), b_desc.load([pid_n * BN, k * BK]).T, acc)
    acc += r_desc.load([pid_m * BM, pid_n * BN]).to(tl.float32)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@triton.jit
def residual_ptr(a_ptr, b_ptr, r_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rn[:, None] * K + kk[None, :], mask=(rn[:, None] < N) & (kk[None, :] < K), other=0.0)
        acc = tl.dot(a, b.T, acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    r = tl.load(r_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0)
    acc = acc + (0.5 * r).to(tl.float32)  # 0.5 * r in f16, as Triton computes it
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=mask)
