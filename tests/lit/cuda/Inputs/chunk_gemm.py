import triton
import triton.language as tl


# out[c, h] = x[s:e, h, :] @ y[s:e, h, :].T for chunk c = rows [starts[c], starts[c+1]) of head h,
# zero past the chunk's length, C x C per chunk. The strides are 64-bit kernel arguments (written
# `name: tl.int64`, as chunked state-space kernels take them so that long sequences do not wrap).
@triton.jit
def chunk_gemm(x_ptr, y_ptr, out_ptr, starts_ptr, stride_xs: tl.int64, stride_xh: tl.int64, stride_ys: tl.int64,
               stride_yh: tl.int64, stride_oc: tl.int64, stride_oh: tl.int64, stride_om: tl.int64, C: tl.constexpr,
               K: tl.constexpr, H: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    ch = tl.program_id(1).to(tl.int64)
    c = ch // H
    h = ch - c * H
    pm = pid // tl.cdiv(C, BN)
    pn = pid % tl.cdiv(C, BN)
    s = tl.load(starts_ptr + c)
    n = tl.load(starts_ptr + c + 1) - s
    x_ptr += s * stride_xs + h * stride_xh
    y_ptr += s * stride_ys + h * stride_yh
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    xs = x_ptr + rm[:, None] * stride_xs + rk[None, :]
    ys = y_ptr + rk[:, None] + rn[None, :] * stride_ys
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(xs, mask=(rm[:, None] < n) & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(ys, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < n), other=0.0)
        acc += tl.dot(a, b)
        xs += BK
        ys += BK
    o = out_ptr + c * stride_oc + h * stride_oh + rm[:, None] * stride_om + rn[None, :]
    tl.store(o, acc, mask=(rm[:, None] < C) & (rn[None, :] < C))


# A bound that is a 64-bit argument: a descriptor's extent is 32-bit, so the load stays a pointer load.
@triton.jit
def wide_bound(x_ptr, out_ptr, n: tl.int64, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, v * 2.0, mask=offs < n)
