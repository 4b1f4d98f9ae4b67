import triton
import triton.language as tl


# An int8 GEMM with a bf16 result: the i32 sums, scaled by an integer and offset past 2^24, converted
# to bf16 (one rounding: through f32 an integer past 2^24 would round twice); and the f32 sums of an
# f16 GEMM, scaled past int8's range, converted to int8, uint8 and int32 (toward zero, saturated at
# the type's bounds, as cvt.rzi).
@triton.jit
def gemm_s8_bf16(a, b, c, cm, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0)
        w = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0)
        acc += tl.dot(x, w, out_dtype=tl.int32)
    big = acc * 2049 + 33554433
    # Just past a bf16 midpoint (an even 8-bit significand, then 1, zeros, and 1 to 32 below f32's
    # precision): through f32 it would round to the midpoint, then to even, down; once, it rounds up.
    m = (acc & 126) | 128
    mid = m * 8388608 + 4194304 + (acc & 31) + 1
    mid = tl.where(acc < 0, -mid, mid)
    tl.store(c + rm[:, None] * N + rn[None, :], big.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))
    tl.store(cm + rm[:, None] * N + rn[None, :], mid.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def gemm_f16_ints(a, b, c8, cu8, c32, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        w = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, w)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    y = acc * 40.0
    tl.store(c8 + offs, y.to(tl.int8), mask=mask)
    tl.store(cu8 + offs, y.to(tl.uint8), mask=mask)
    tl.store(c32 + offs, (acc * 1.0e9).to(tl.int32), mask=mask)


# The same conversions without a dot (the SIMT path), NaN included.
@triton.jit
def casts_1d(x, i, o8, ou8, o32, obf, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    y = tl.where(v > 0.9, float("nan"), v * 300.0)
    tl.store(o8 + offs, y.to(tl.int8), mask=m)
    tl.store(ou8 + offs, y.to(tl.uint8), mask=m)
    tl.store(o32 + offs, tl.where(v > 0.9, float("nan"), v * 3.0e9).to(tl.int32), mask=m)
    q = tl.load(i + offs, mask=m, other=0)
    tl.store(obf + offs, (q * 1048573 + 16777217).to(tl.bfloat16), mask=m)


@triton.jit
def casts_f64(x, oh, ob, mh, mb, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.store(oh + offs, v.to(tl.float16), mask=m)
    tl.store(ob + offs, v.to(tl.bfloat16), mask=m)
    # Just past a midpoint of f16 (2^-11 apart in [1, 2)) and of bf16 (2^-8): rounded through f32 first
    # each would land on the midpoint, then on the even neighbour (below for half of them).
    k = (offs % 1024).to(tl.float64)
    tl.store(mh + offs, (1.0 + (2.0 * k + 1.0) * 0.00048828125 + v * 1.0e-12 + 2.0e-12).to(tl.float16), mask=m)
    j = (offs % 128).to(tl.float64)
    tl.store(mb + offs, (1.0 + (2.0 * j + 1.0) * 0.00390625 + v * 1.0e-11 + 2.0e-11).to(tl.bfloat16), mask=m)
