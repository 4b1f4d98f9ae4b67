import triton
import triton.language as tl


# Quantized-weight GEMMs: B is computed in registers from what was loaded (integers widened and
# scaled), so it cannot be a wgmma operand straight from its TMA slot.

# C = A @ (Q * s): Q int8 [K, N], one f16 scale per column, read before the K loop.
@triton.jit
def dq_int8(a, q, s, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, DT: tl.constexpr = tl.float16):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    scale = tl.load(s + rn, mask=rn < N, other=0.0)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        w8 = tl.load(q + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0)
        w = w8.to(DT) * scale[None, :]
        acc = tl.dot(x, w, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(DT), mask=(rm[:, None] < M) & (rn[None, :] < N))


# C = A @ W, W[k, n] = (((P[k // 8, n] >> 4 (k % 8)) & 15) - Z[g, n]) * S[g, n] with g = k // G: eight
# 4-bit weights packed into each int32 along K, and a zero point and a scale per group of G rows,
# read in the K loop as one row of the block's columns.
@triton.jit
def dq_int4(a, p, z, sc, c, M, N, K, G: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    shift = ((rk % 8) * 4)[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        packed = tl.load(p + ((k0 + rk) // 8)[:, None] * N + rn[None, :])
        g = k0 // G
        zero = tl.load(z + g * N + rn[None, :])
        scale = tl.load(sc + g * N + rn[None, :])
        w = (((packed >> shift) & 15).to(tl.float16) - zero) * scale
        acc = tl.dot(x, w, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


# The scales' buffer is written by the kernel too (a running update of them): a 1xN row read where it
# is used could then read the new values, so the row has no lazy form and the SIMT path runs it.
@triton.jit
def dq_scales_written(a, q, s, c, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        w8 = tl.load(q + (k0 + rk)[:, None] * N + rn[None, :])
        row = tl.load(s + rn[None, :])
        acc = tl.dot(x, w8.to(tl.float16) * row, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))
    tl.store(s + rn[None, :], tl.full((1, BN), 1.0, tl.float16), mask=tl.program_id(0) == 0)


# Weights stored in f16, halved and converted to bf16 in registers for a bf16 A (a cast between the
# two 16-bit float types: through f32, one rounding).
@triton.jit
def f16_weights_bf16(a, w, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        y = tl.load(w + (k0 + rk)[:, None] * (BN * tl.num_programs(1)) + rn[None, :])
        acc = tl.dot(x, (y * 0.5).to(tl.bfloat16), acc)
    tl.store(c + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :], acc)


# int8 weights stored N x K (a linear layer's layout), transposed in registers, scaled per output
# column: C = A @ (Q^T * s).
@triton.jit
def dq_int8_nk(a, q, s, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    scale = tl.load(s + rn, mask=rn < N, other=0.0)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        qt = tl.load(q + rn[:, None] * K + (k0 + rk)[None, :], mask=(rn[:, None] < N) & ((k0 + rk)[None, :] < K), other=0)
        acc = tl.dot(x, tl.trans(qt).to(tl.float16) * scale[None, :], acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


# The same weights dequantized first, then transposed (`tl.trans` of the tile computed in registers):
# C = A @ (Q * s[:, None])^T.
@triton.jit
def dq_int8_nk_t(a, q, s, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    scale = tl.load(s + rn, mask=rn < N, other=0.0)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        q8 = tl.load(q + rn[:, None] * K + (k0 + rk)[None, :], mask=(rn[:, None] < N) & ((k0 + rk)[None, :] < K), other=0)
        w = q8.to(tl.float16) * scale[:, None]
        acc = tl.dot(x, tl.trans(w), acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


# 4-bit codes looked up in a table (as NF4 weights are): two codes per uint8 of P [K/2, N] along K
# (the low nibble for even k), each the index of its value in LUT (16 f32 values), times a column scale:
# C = A @ W, W[k, n] = LUT[(P[k // 2, n] >> 4 (k % 2)) & 15] * s[n].
@triton.jit
def nf4_lookup(a, p, lut, s, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    scale = tl.load(s + rn, mask=rn < N, other=0.0)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        q = tl.load(p + ((k0 + rk) // 2)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0)
        code = (q >> ((((k0 + rk) % 2) * 4)[:, None])) & 15
        w = tl.load(lut + code).to(tl.float16) * scale[None, :]
        acc = tl.dot(x, w, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))
