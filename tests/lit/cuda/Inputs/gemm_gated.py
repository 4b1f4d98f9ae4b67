# Gated MLP GEMMs (two tl.dots in one K loop) for cuda/two_dots.test: a descriptor form sharing A's tile,
# a pointer form with a bias row and masks, and a form whose two dots read different A matrices.
import triton
import triton.language as tl


@triton.jit
def gated(x, w1, w3, out, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    xd = tl.make_tensor_descriptor(x, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    w1d = tl.make_tensor_descriptor(w1, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    w3d = tl.make_tensor_descriptor(w3, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    od = tl.make_tensor_descriptor(out, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    r = tl.program_id(0) * BM
    c = tl.program_id(1) * BN
    a1 = tl.zeros([BM, BN], dtype=tl.float32)
    a3 = tl.zeros([BM, BN], dtype=tl.float32)
    for kk in range(0, K, BK):
        xa = xd.load([r, kk])
        a1 = tl.dot(xa, w1d.load([kk, c]), a1)
        a3 = tl.dot(xa, w3d.load([kk, c]), a3)
    h = a1 * tl.sigmoid(a1) * a3
    od.store([r, c], h.to(tl.float16))

@triton.jit
def two_a(a1, a2, b1, b2, out, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a1d = tl.make_tensor_descriptor(a1, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    a2d = tl.make_tensor_descriptor(a2, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b1d = tl.make_tensor_descriptor(b1, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    b2d = tl.make_tensor_descriptor(b2, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    od = tl.make_tensor_descriptor(out, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    r = tl.program_id(0) * BM
    c = tl.program_id(1) * BN
    s = tl.zeros([BM, BN], dtype=tl.float32)
    t = tl.zeros([BM, BN], dtype=tl.float32)
    for kk in range(0, K, BK):
        s = tl.dot(a1d.load([r, kk]), b1d.load([kk, c]), s)
        t = tl.dot(a2d.load([r, kk]), b2d.load([kk, c]), t)
    od.store([r, c], (s - t).to(tl.float16))


@triton.jit
def gated_ptr(x_ptr, w1_ptr, w3_ptr, b_ptr, out_ptr, M, N, K, stride_xm, stride_wk, stride_om,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    xp = x_ptr + rm[:, None] * stride_xm + rk[None, :]
    w1p = w1_ptr + rk[:, None] * stride_wk + rn[None, :]
    w3p = w3_ptr + rk[:, None] * stride_wk + rn[None, :]
    g = tl.zeros([BM, BN], dtype=tl.float32)
    u = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        km = rk < K - k * BK
        xa = tl.load(xp, mask=(rm[:, None] < M) & km[None, :], other=0.0)
        g += tl.dot(xa, tl.load(w1p, mask=km[:, None] & (rn[None, :] < N), other=0.0))
        u += tl.dot(xa, tl.load(w3p, mask=km[:, None] & (rn[None, :] < N), other=0.0))
        xp += BK
        w1p += BK * stride_wk
        w3p += BK * stride_wk
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    h = (g + bias[None, :]) * tl.sigmoid(g) * u
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], h.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))
