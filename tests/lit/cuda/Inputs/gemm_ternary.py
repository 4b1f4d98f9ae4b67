import triton
import triton.language as tl


# C (i32) = A (i8) @ W with ternary weights: W[k, n] = ((P[k % KQ, n] >> 2 (k // KQ)) & 3) - 1, KQ = K / 4:
# four 2-bit weights packed into each uint8 of P [KQ, N], quarter i of K in bits 2i and 2i + 1. The
# outer loop takes the quarters; A's pointers are advanced by the inner loop and carried on by the
# outer one, P's start afresh each quarter. B is computed in registers as s8. With WRAP the rows are
# wrapped (`% M`, as many GEMM libraries write them) instead of masked: the wrapped rows' sums flow
# through both loops' accumulators to the store, which masks the rows past M.
@triton.jit
def ternary_s8(a, p, c, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, WRAP: tl.constexpr = False):
    rs = tl.program_id(0) * BM + tl.arange(0, BM)
    rm = rs % M if WRAP else rs
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a + rm[:, None] * K + rk[None, :]
    one = tl.full((BK, BN), 1, tl.int8)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for quarter in range(4):
        p_ptrs = p + rk[:, None] * N + rn[None, :]
        for step in range(0, K // 4 // BK):
            if WRAP:  # every row is in bounds
                x = tl.load(a_ptrs)
            else:
                x = tl.load(a_ptrs, mask=rm[:, None] < M, other=0)
            q = tl.load(p_ptrs, mask=rn[None, :] < N, other=0)
            w = ((q >> (2 * quarter)) & 3).to(tl.int8) - one
            acc += tl.dot(x, w, out_dtype=tl.int32)
            a_ptrs += BK
            p_ptrs += BK * N
    tl.store(c + rs[:, None] * N + rn[None, :], acc, mask=(rs[:, None] < M) & (rn[None, :] < N))


# Signed 4-bit weights, two to an int8 of P [K/2, N]: the first half of K takes the low nibbles,
# sign-extended by `(q << 4) >> 4` (the shift left wraps in int8), the second the high ones (`q >> 4`).
@triton.jit
def nibbles_s8(a, p, c, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for half in tl.static_range(2):
        for k0 in range(0, K // 2, BK):
            x = tl.load(a + rm[:, None] * K + (half * (K // 2) + k0 + rk)[None, :], mask=rm[:, None] < M, other=0)
            q = tl.load(p + (k0 + rk)[:, None] * N + rn[None, :], mask=rn[None, :] < N, other=0)
            if half == 0:
                w = (q << 4) >> 4
            else:
                w = q >> 4
            acc += tl.dot(x, w, out_dtype=tl.int32)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


# C (i32) = A (i8) @ (Q - Z), Q an int8 weight tile and Z a per-column zero point (int8, loaded once):
# B is computed in registers as s8 (the difference wraps in int8, as Triton computes it).
@triton.jit
def zero_point_s8(a, q, z, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    zp = tl.load(z + rn, mask=rn < N, other=0)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0)
        w = tl.load(q + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0)
        acc += tl.dot(x, w - zp[None, :], out_dtype=tl.int32)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
